package snapfile

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/zkraft/zkraft/znode"
)

// Report is what `zkraft snapshot inspect` tells of a snapshot.
type Report struct {
	Kind       Kind   `json:"kind"`
	Zxid       Zxid   `json:"zxid"`
	Source     string `json:"source,omitempty"`
	SavedAt    string `json:"saved_at,omitempty"`
	FileBytes  int64  `json:"snapshot_bytes"`
	Znodes     int    `json:"znodes"`
	Ephemerals int    `json:"ephemerals"`
	Containers int    `json:"containers"`
	TTLs       int    `json:"ttl_nodes"`
	Sessions   int    `json:"sessions"`
	// ACLs counts the distinct ACL lists (ZooKeeper's ACL cache entries).
	ACLs int `json:"acl_lists"`
	// Bytes is the length of every path and data together, as mntr's
	// zk_approximate_data_size; DataBytes the data alone.
	Bytes     int64 `json:"bytes"`
	DataBytes int64 `json:"data_bytes"`
	// Largest is the znode with the most data.
	Largest Subtree `json:"largest_znode"`
	// Depth is how deep Subtrees looked: every node at depth 1 to Depth
	// ("/a" is 1, "/a/b" 2) is a subtree with its descendants.
	Depth               int                 `json:"depth"`
	ByBytes             []Subtree           `json:"largest_by_bytes"`
	ByZnodes            []Subtree           `json:"largest_by_znodes"`
	EphemeralsBySession []SessionEphemerals `json:"ephemerals_by_session"`
}

// Subtree is a node and its descendants: how many, and their paths' and
// data's length together.
type Subtree struct {
	Path   string `json:"path"`
	Znodes int    `json:"znodes"`
	Bytes  int64  `json:"bytes"`
}

// SessionEphemerals is a session of the snapshot and the ephemerals it
// owns. A session the snapshot lacks (ZooKeeper's fuzzy snapshots can
// hold such ephemerals) has Timeout 0.
type SessionEphemerals struct {
	Session   Zxid     `json:"session"`
	TimeoutMs int32    `json:"timeout_ms"`
	Count     int      `json:"ephemerals"`
	Paths     []string `json:"paths"`
}

// Inspect counts what f holds and ranks its top largest subtrees down
// to depth.
func Inspect(f *File, depth, top int) *Report {
	s := f.Snapshot
	r := &Report{Kind: f.Kind, Zxid: f.Meta.Zxid, Source: f.Meta.Source, SavedAt: f.Meta.SavedAt,
		FileBytes: f.Meta.SnapshotBytes, Znodes: len(s.Nodes), Sessions: len(s.Sessions), ACLs: len(s.ACLs), Depth: depth}
	bySession := map[int64]*SessionEphemerals{}
	for _, ss := range s.Sessions {
		bySession[ss.ID] = &SessionEphemerals{Session: Zxid(ss.ID), TimeoutMs: ss.Timeout}
	}
	subtrees := map[string]*Subtree{}
	r.Largest.Bytes = -1
	for _, n := range s.Nodes {
		size := int64(len(n.Path) + len(n.Data))
		r.Bytes += size
		r.DataBytes += int64(len(n.Data))
		if int64(len(n.Data)) > r.Largest.Bytes {
			r.Largest = Subtree{Path: n.Path, Znodes: 1, Bytes: int64(len(n.Data))}
		}
		switch owner := n.Stat.EphemeralOwner; {
		case owner == 0:
		case owner == math.MinInt64:
			r.Containers++
		case znode.IsTTLOwner(owner) && bySession[owner] == nil:
			r.TTLs++
		default:
			r.Ephemerals++
			se := bySession[owner]
			if se == nil {
				se = &SessionEphemerals{Session: Zxid(owner)}
				bySession[owner] = se
			}
			se.Count++
			se.Paths = append(se.Paths, n.Path)
		}
		for i, d := 1, 0; i < len(n.Path) && d < depth; i++ {
			if n.Path[i] != '/' {
				continue
			}
			d++
			addTo(subtrees, n.Path[:i], size)
		}
		if n.Path != "/" && strings.Count(n.Path, "/") <= depth {
			addTo(subtrees, n.Path, size)
		}
	}
	all := make([]Subtree, 0, len(subtrees))
	for _, st := range subtrees {
		all = append(all, *st)
	}
	r.ByBytes = topBy(all, top, func(a Subtree) int64 { return a.Bytes })
	r.ByZnodes = topBy(all, top, func(a Subtree) int64 { return int64(a.Znodes) })
	for _, se := range bySession {
		if se.Count > 0 {
			r.EphemeralsBySession = append(r.EphemeralsBySession, *se)
		}
	}
	slices.SortFunc(r.EphemeralsBySession, func(a, b SessionEphemerals) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Session, b.Session))
	})
	return r
}

func addTo(m map[string]*Subtree, path string, size int64) {
	st := m[path]
	if st == nil {
		st = &Subtree{Path: path}
		m[path] = st
	}
	st.Znodes++
	st.Bytes += size
}

// topBy is the top n of all by key, largest first, ties by path.
func topBy(all []Subtree, n int, key func(Subtree) int64) []Subtree {
	out := slices.Clone(all)
	slices.SortFunc(out, func(a, b Subtree) int {
		return cmp.Or(cmp.Compare(key(b), key(a)), strings.Compare(a.Path, b.Path))
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}
