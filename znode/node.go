package znode

import "github.com/zkraft/zkraft/jute"

// nodeKind says what a node's owner field means.
type nodeKind uint8

const (
	kindPersistent nodeKind = iota
	kindEphemeral           // owner is the session id
	kindContainer
	kindTTL // owner holds the time-to-live in ms
)

// kindBits is how many low bits of node.meta hold the kind; the rest hold
// the aclRef.
const (
	kindBits = 2
	kindMask = 1<<kindBits - 1
)

// node is one znode. Its data slice is never modified in place (setData
// replaces it), so readers may keep it after releasing the tree lock. Its
// ACL is a reference into the tree's aclCache, shared by every node with an
// equal list.
//
// The struct is kept at 80 bytes (a Go size class; one more byte and it
// would take 96): the node's name lives only in its parent's childSet, the
// kind and the ACL share one word, one field serves as ephemeral owner or
// TTL (no node is both), and what a leaf that never had children nor an
// ACL change does not need sits in a nodeExt. TestNodeSize guards the size.
type node struct {
	data  []byte
	ext   *nodeExt // nil: no children ever, cversion 0, aversion 0, pzxid = czxid
	czxid int64
	mzxid int64
	ctime int64
	mtime int64
	// owner is the session id of a kindEphemeral node and the TTL in ms of
	// a kindTTL node; 0 for the other kinds.
	owner   int64
	version int32
	meta    uint32 // aclRef<<kindBits | kind
}

// nodeExt is the part of a node most nodes never need: its children and
// the Stat fields that only move with child or ACL changes. A node gets one
// with its first child or setACL and keeps it (pzxid and cversion must
// outlive the children).
type nodeExt struct {
	kids  childSet
	pzxid int64
	// cversion is stored as ZooKeeper stores it: the number of child
	// creations. Clients see cversion*2 - numChildren (creates + deletes).
	cversion int32
	aversion int32
	// desc is the number of the node's descendants (getAllChildrenNumber),
	// kept by link and unlink on every ancestor of the node they change,
	// so that count is read in constant time under the tree's lock.
	desc int64
}

// extend returns n's nodeExt, creating it with the values a node without
// one reports.
func (n *node) extend() *nodeExt {
	if n.ext == nil {
		n.ext = &nodeExt{pzxid: n.czxid}
	}
	return n.ext
}

// pzxid is the zxid of the last change to the node's children.
func (n *node) pzxid() int64 {
	if n.ext == nil {
		return n.czxid
	}
	return n.ext.pzxid
}

// cversion is the stored child version (the number of child creations).
func (n *node) cversion() int32 {
	if n.ext == nil {
		return 0
	}
	return n.ext.cversion
}

// aversion is the ACL version.
func (n *node) aversion() int32 {
	if n.ext == nil {
		return 0
	}
	return n.ext.aversion
}

// kind returns what the node is.
func (n *node) kind() nodeKind { return nodeKind(n.meta & kindMask) }

// setKind sets the node's kind.
func (n *node) setKind(k nodeKind) { n.meta = n.meta&^kindMask | uint32(k) }

// acl returns the node's interned ACL reference.
func (n *node) acl() aclRef { return aclRef(n.meta >> kindBits) }

// setACL sets the node's interned ACL reference (ref < maxACLLists).
func (n *node) setACL(ref aclRef) { n.meta = uint32(ref)<<kindBits | n.meta&kindMask }

// children returns the node's child set, nil when it has no children.
func (n *node) children() *childSet {
	if n.ext == nil || n.ext.kids.len() == 0 {
		return nil
	}
	return &n.ext.kids
}

// numChildren is the number of children.
func (n *node) numChildren() int {
	if n.ext == nil {
		return 0
	}
	return n.ext.kids.len()
}

// child returns the child called name, or nil.
func (n *node) child(name string) *node {
	if n.ext == nil {
		return nil
	}
	return n.ext.kids.get(name)
}

// stat returns the node's Stat as clients see it.
func (n *node) stat() jute.Stat {
	nc := int32(n.numChildren())
	st := jute.Stat{
		Czxid:       n.czxid,
		Mzxid:       n.mzxid,
		Ctime:       n.ctime,
		Mtime:       n.mtime,
		Version:     n.version,
		Cversion:    n.cversion()*2 - nc,
		Aversion:    n.aversion(),
		DataLength:  int32(len(n.data)),
		NumChildren: nc,
		Pzxid:       n.pzxid(),
	}
	if n.kind() == kindEphemeral {
		st.EphemeralOwner = n.owner
	}
	return st
}

// addChild records child c under name, which must not be taken.
func (n *node) addChild(name string, c *node) { n.extend().kids.add(name, c) }

// removeChild forgets the child called name.
func (n *node) removeChild(name string) {
	if n.ext != nil {
		n.ext.kids.remove(name)
	}
}
