package datadir

import (
	"errors"
	"fmt"
	"hash/adler32"

	"github.com/zkraft/zkraft/jute"
)

// Magic numbers of ZooKeeper's file headers ("ZKSN", "ZKLG") and the
// format version both carry.
const (
	snapMagic  = 0x5a4b534e
	logMagic   = 0x5a4b4c47
	fileFormat = 2
)

// OpenACL is the ACL index ZooKeeper's ACL cache reserves for
// world:anyone:cdrwa, which it never stores in the cache.
const OpenACL = -1

// ErrCorrupt is wrapped by every failure caused by a file's contents.
var ErrCorrupt = errors.New("datadir: corrupt file")

// Snapshot is one ZooKeeper snapshot: the sessions, the ACL cache and
// every znode, parents before children.
type Snapshot struct {
	// Zxid is the last transaction applied when the snapshot began (its
	// file name's suffix). A snapshot is fuzzy: transactions after Zxid
	// may be partly in it, and replaying them from the log settles that.
	Zxid     int64
	Sessions []Session
	// ACLs maps the cache's index to its ACL list; OpenACL is implied.
	ACLs  map[int64][]jute.ACL
	Nodes []Node
}

// Session is a session and its negotiated timeout in milliseconds.
type Session struct {
	ID      int64
	Timeout int32
}

// Node is a znode as DataNode serializes it. Path is "/" for the root
// (ZooKeeper writes it as ""). Stat's DataLength and NumChildren are
// not stored by ZooKeeper and are left 0.
type Node struct {
	Path string
	Data []byte
	ACL  int64 // index into Snapshot.ACLs, or OpenACL
	Stat jute.Stat
}

// ReadSnapshot parses a snapshot file's bytes (uncompressed); zxid comes
// from its name. The Adler-32 seal is checked.
func ReadSnapshot(b []byte, zxid int64) (*Snapshot, error) {
	r := jute.NewReader(b)
	if err := readHeader(r, snapMagic); err != nil {
		return nil, err
	}
	s := &Snapshot{Zxid: zxid, ACLs: map[int64][]jute.ACL{}}
	n := r.Int()
	for i := int32(0); i < n && r.Err() == nil; i++ {
		s.Sessions = append(s.Sessions, Session{ID: r.Long(), Timeout: r.Int()})
	}
	n = r.Int()
	for i := int32(0); i < n && r.Err() == nil; i++ {
		id := r.Long()
		s.ACLs[id] = jute.ReadACLs(r)
	}
	for r.Err() == nil {
		path := r.String()
		if path == "/" {
			break
		}
		node := Node{Path: path, Data: r.Buffer(), ACL: r.Long()}
		st := &node.Stat
		st.Czxid, st.Mzxid, st.Ctime, st.Mtime = r.Long(), r.Long(), r.Long(), r.Long()
		st.Version, st.Cversion, st.Aversion = r.Int(), r.Int(), r.Int()
		st.EphemeralOwner, st.Pzxid = r.Long(), r.Long()
		if path == "" {
			node.Path = "/"
		}
		s.Nodes = append(s.Nodes, node)
	}
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("%w: snapshot: %w", ErrCorrupt, err)
	}
	if err := checkSeal(b, r); err != nil {
		return nil, err
	}
	if len(s.Nodes) == 0 || s.Nodes[0].Path != "/" {
		return nil, fmt.Errorf("%w: snapshot does not start with the root", ErrCorrupt)
	}
	return s, nil
}

// readHeader checks a FileHeader {magic int, version int, dbid long}.
func readHeader(r *jute.Reader, magic int32) error {
	m, v := r.Int(), r.Int()
	r.Long() // dbid, always -1
	if err := r.Err(); err != nil {
		return fmt.Errorf("%w: header: %w", ErrCorrupt, err)
	}
	if m != magic {
		return fmt.Errorf("%w: magic %#x, want %#x", ErrCorrupt, uint32(m), uint32(magic))
	}
	if v != fileFormat {
		return fmt.Errorf("%w: format version %d, want %d", ErrCorrupt, v, fileFormat)
	}
	return nil
}

// checkSeal checks SnapStream's seal after the tree: the Adler-32 of
// every byte before it, then the string "/". The digest that may follow
// (ZooKeeper 3.6+, sealed again) is not needed and not read.
func checkSeal(b []byte, r *jute.Reader) error {
	sum := adler32.Checksum(b[:r.Offset()])
	got := r.Long()
	end := r.String()
	if err := r.Err(); err != nil {
		return fmt.Errorf("%w: snapshot seal: %w", ErrCorrupt, err)
	}
	if uint64(got) != uint64(sum) || end != "/" {
		return fmt.Errorf("%w: snapshot checksum %#x, computed %#x", ErrCorrupt, got, sum)
	}
	return nil
}
