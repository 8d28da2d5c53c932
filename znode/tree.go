package znode

import (
	"strings"

	"github.com/zkraft/zkraft/acl"

	"github.com/zkraft/zkraft/jute"
)

// Options selects optional ZooKeeper behaviour. Every member of an ensemble
// must use the same Options.
type Options struct {
	// ExtendedTypes enables TTL nodes (zookeeper.extendedTypesEnabled);
	// without it createTTL fails with jute.ErrUnimplemented.
	ExtendedTypes bool
	// EnforceQuota makes hard quota limits fail writes with
	// jute.ErrQuotaExceeded (zookeeper.enforceQuota).
	EnforceQuota bool
	// SkipACL turns every ACL check off (zookeeper.skipACL=yes): every
	// caller may do everything, as an operator recovering a tree whose
	// credentials are lost needs.
	SkipACL bool
}

// Tree is the data tree plus the session table. It is not safe for
// concurrent use.
type Tree struct {
	opts Options
	// root is "/"; every other node hangs off its parent's childSet under
	// its name, so a path is found segment by segment (see lookup).
	root  *node
	count int // number of nodes, the root included
	// parents indexes large directories by path (see parents.go).
	parents  map[string]*nodeExt
	sessions map[int64]*session
	acls     *aclCache
	lastZxid int64
	dataSize int64 // sum of len(path)+len(data) over all nodes
	nEphem   int
	// reapable maps the path of every container and TTL node to its place
	// in reapOrder, the same paths in an order ReapScan walks a chunk at a
	// time (a removal moves the last path into the removed one's place).
	reapable  map[string]int
	reapOrder []string
	// quotas holds the paths carrying a quota (ZooKeeper's PathTrie).
	quotas quotaTrie
	// view is the open SnapshotView, whose pre-images the mutation
	// primitives keep (nil: none).
	view *SnapshotView
	// applier is Apply's working state, reused from write to write.
	applier applier
}

// NewTree returns a tree holding "/", "/zookeeper", "/zookeeper/quota" and
// "/zookeeper/config", all with zxid 0 and empty data, as a fresh ZooKeeper
// server has. Their ACLs are open, except /zookeeper/config: world:anyone:r
// with aclVersion -1, so only the super user may reconfig (ZooKeeper's
// READ_ACL_UNSAFE on the config node).
func NewTree(opts Options) *Tree {
	t := newEmptyTree(opts)
	open := []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}
	t.root = t.systemNode(open, 0)
	t.count = 1
	t.dataSize += int64(len(RootPath))
	for _, p := range []string{ProcPath, QuotaPath, ConfigPath} {
		parent, name, _ := splitPath(p)
		list, aversion := open, int32(0)
		if p == ConfigPath {
			list, aversion = []jute.ACL{{Perms: jute.PermRead, ID: jute.Id{Scheme: "world", ID: "anyone"}}}, -1
		}
		t.lookup(parent).addChild(name, t.systemNode(list, aversion))
		t.count++
		t.dataSize += int64(len(p))
	}
	countDescendants(t.root)
	return t
}

// systemNode returns one of the nodes every tree starts with: zxid 0,
// empty (not null) data.
func (t *Tree) systemNode(list []jute.ACL, aversion int32) *node {
	n := &node{data: []byte{}}
	ref, _ := t.acls.acquire(list) // an empty cache has room
	n.setACL(ref)
	if aversion != 0 {
		n.extend().aversion = aversion
	}
	return n
}

func newEmptyTree(opts Options) *Tree {
	return &Tree{
		opts:     opts,
		parents:  make(map[string]*nodeExt),
		sessions: make(map[int64]*session),
		acls:     newACLCache(),
		reapable: make(map[string]int),
	}
}

// lookup finds a node by path: under its parent when the parents index
// holds that, else walking from the root. "" is an alias of the root, as
// in ZooKeeper. Paths are not validated: a malformed one (no leading slash,
// an empty segment, a trailing slash) names no node, since no stored name
// is empty or holds a slash.
func (t *Tree) lookup(path string) *node {
	if e, name := t.indexedParent(path); e != nil {
		return e.kids.get(name)
	}
	return t.walk(path)
}

// walk finds a node by path one segment at a time from the root.
func (t *Tree) walk(path string) *node {
	if len(path) <= 1 {
		if path == "" || path == RootPath {
			return t.root
		}
		return nil
	}
	if path[0] != '/' {
		return nil
	}
	n := t.root
	for rest := path[1:]; ; {
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			return n.child(rest)
		}
		if n = n.child(rest[:i]); n == nil {
			return nil
		}
		rest = rest[i+1:]
	}
}

// aclOf returns n's ACL list. It must not be modified.
func (t *Tree) aclOf(n *node) []jute.ACL { return t.acls.list(n.acl()) }

// LastZxid is the zxid of the last applied transaction.
func (t *Tree) LastZxid() int64 { return t.lastZxid }

// Stats are tree-wide counters for monitoring (mntr).
type Stats struct {
	// Nodes is the number of znodes, the root included.
	Nodes int
	// ZnodeCount is ZooKeeper's zk_znode_count: Nodes+1, because ZooKeeper
	// indexes the root under both "" and "/".
	ZnodeCount int
	// Ephemerals is the number of ephemeral nodes (zk_ephemerals_count).
	Ephemerals int
	// DataSize is the sum of path and data lengths (zk_approximate_data_size).
	DataSize int64
	// Sessions is the number of live sessions.
	Sessions int
}

// Stats returns the tree's counters.
func (t *Tree) Stats() Stats {
	return Stats{
		Nodes:      t.count,
		ZnodeCount: t.count + 1,
		Ephemerals: t.nEphem,
		DataSize:   t.dataSize,
		Sessions:   len(t.sessions),
	}
}

// Permits reports whether ids hold perm in list, as every ACL check of
// the tree decides it (always, with Options.SkipACL).
func (t *Tree) Permits(list []jute.ACL, perm int32, ids []jute.Id) bool {
	return t.opts.SkipACL || acl.Check(list, perm, ids)
}
