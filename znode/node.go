package znode

import "github.com/zkraft/zkraft/jute"

// nodeKind says what a node's owner field means.
type nodeKind uint8

const (
	kindPersistent nodeKind = iota
	kindEphemeral           // owner is the session id
	kindContainer
	kindTTL // ttl holds the time-to-live in ms
)

// node is one znode. Its data slice is never modified in place (setData
// replaces it), so readers may keep it after releasing the tree lock. acl is
// an interned slice shared by every node with an equal list.
type node struct {
	data     []byte
	acl      []jute.ACL
	children map[string]struct{} // child names (last path segment); nil when empty
	czxid    int64
	mzxid    int64
	pzxid    int64
	ctime    int64
	mtime    int64
	version  int32
	// cversion is stored as ZooKeeper stores it: the number of child
	// creations. Clients see cversion*2 - numChildren (creates + deletes).
	cversion int32
	aversion int32
	kind     nodeKind
	owner    int64 // session id of an ephemeral node
	ttl      int64 // TTL of a kindTTL node, ms
}

// stat returns the node's Stat as clients see it.
func (n *node) stat() jute.Stat {
	nc := int32(len(n.children))
	st := jute.Stat{
		Czxid:       n.czxid,
		Mzxid:       n.mzxid,
		Ctime:       n.ctime,
		Mtime:       n.mtime,
		Version:     n.version,
		Cversion:    n.cversion*2 - nc,
		Aversion:    n.aversion,
		DataLength:  int32(len(n.data)),
		NumChildren: nc,
		Pzxid:       n.pzxid,
	}
	if n.kind == kindEphemeral {
		st.EphemeralOwner = n.owner
	}
	return st
}

// addChild records a child name.
func (n *node) addChild(name string) {
	if n.children == nil {
		n.children = make(map[string]struct{})
	}
	n.children[name] = struct{}{}
}

// removeChild forgets a child name.
func (n *node) removeChild(name string) {
	delete(n.children, name)
	if len(n.children) == 0 {
		n.children = nil
	}
}
