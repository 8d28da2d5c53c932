package znode

import (
	"strings"

	"github.com/zkraft/zkraft/jute"
)

// The mutation primitives below are the only code that changes the tree
// during Apply. Each records its inverse so a failed multi can roll back,
// and each first lets an open SnapshotView keep the pre-image of every
// node it changes (Tree.preserve).

// insert adds n at path under parent (whose child name is name). n holds a
// reference on its ACL (acquired by the caller), which the tree now owns.
func (a *applier) insert(path string, parent *node, name string, n *node) error {
	if err := mustCanonical(path); err != nil {
		return err
	}
	a.t.link(path, parent, name, n)
	if a.multi {
		a.onUndo(func() { a.t.unlink(path, parent, name, n) })
	}
	parentPath, _, _ := splitPath(path)
	a.quotaCreated(path, parentPath, name, n)
	return nil
}

// remove deletes the node at path from the tree.
func (a *applier) remove(path string, parent *node, name string, n *node) error {
	if err := mustCanonical(path); err != nil {
		return err
	}
	list := a.t.aclOf(n)
	a.t.unlink(path, parent, name, n)
	if a.multi {
		a.onUndo(func() {
			// Rolling back newest first, the lists in use are those of the
			// moment after the remove, so the cache has room for this one.
			ref, _ := a.t.acls.acquire(list)
			n.setACL(ref)
			a.t.link(path, parent, name, n)
		})
	}
	parentPath, _, _ := splitPath(path)
	a.quotaDeleted(path, parentPath, name, n)
	return nil
}

// link puts n, which already holds a reference on its ACL, into the tree:
// parent's child set (under a copy of name, so the set does not keep the
// request's whole path alive), counters, ephemeral and reaper indexes.
func (t *Tree) link(path string, parent *node, name string, n *node) {
	t.preserve(parent)
	parent.addChild(strings.Clone(name), n)
	t.childAdded(parentOf(path), parent)
	t.addDescendants(parentOf(path), 1)
	t.count++
	t.dataSize += int64(len(path) + len(n.data))
	t.indexNode(path, n)
}

// unlink is the inverse of link; it also releases n's ACL reference.
func (t *Tree) unlink(path string, parent *node, name string, n *node) {
	t.preserve(parent)
	t.preserve(n) // a rolled-back remove gives n its ACL back, maybe in another slot
	parent.removeChild(name)
	t.childRemoved(parentOf(path), parent)
	t.addDescendants(parentOf(path), -1)
	t.count--
	t.acls.release(n.acl())
	t.dataSize -= int64(len(path) + len(n.data))
	t.unindexNode(path, n)
}

// indexNode registers an ephemeral with its session and a container or TTL
// node with the reaper index.
func (t *Tree) indexNode(path string, n *node) {
	switch n.kind() {
	case kindEphemeral:
		t.nEphem++
		if s := t.sessions[n.owner]; s != nil {
			s.addEphemeral(path)
		}
	case kindContainer, kindTTL:
		if _, ok := t.reapable[path]; !ok {
			t.reapable[path] = len(t.reapOrder)
			t.reapOrder = append(t.reapOrder, path)
		}
	}
}

// unindexNode is the inverse of indexNode.
func (t *Tree) unindexNode(path string, n *node) {
	switch n.kind() {
	case kindEphemeral:
		t.nEphem--
		if s := t.sessions[n.owner]; s != nil {
			s.removeEphemeral(path)
		}
	case kindContainer, kindTTL:
		if i, ok := t.reapable[path]; ok {
			last := len(t.reapOrder) - 1
			moved := t.reapOrder[last]
			t.reapOrder[i] = moved
			t.reapable[moved] = i
			t.reapOrder[last] = ""
			t.reapOrder = t.reapOrder[:last]
			delete(t.reapable, path)
		}
	}
}

// setChildMeta sets a parent's stored cversion and pzxid.
func (a *applier) setChildMeta(p *node, cversion int32, pzxid int64) {
	a.t.preserve(p)
	e := p.extend()
	if a.multi {
		oc, op := e.cversion, e.pzxid
		a.onUndo(func() { e.cversion, e.pzxid = oc, op })
	}
	e.cversion, e.pzxid = cversion, pzxid
}

// setNodeData replaces a node's data and data metadata.
func (a *applier) setNodeData(path string, n *node, data []byte, version int32, zxid, mtime int64) error {
	if err := mustCanonical(path); err != nil {
		return err
	}
	a.t.preserve(n)
	od, ov, oz, om := n.data, n.version, n.mzxid, n.mtime
	delta := int64(len(data) - len(od))
	n.data, n.version, n.mzxid, n.mtime = data, version, zxid, mtime
	a.t.dataSize += delta
	if a.multi {
		a.onUndo(func() {
			n.data, n.version, n.mzxid, n.mtime = od, ov, oz, om
			a.t.dataSize -= delta
		})
	}
	a.quotaDataChanged(path, delta)
	return nil
}

// setNodeACL replaces a node's ACL and aversion (setACL is not allowed in
// a multi, so no undo is needed). The cache may refuse a new list (see
// aclCache.acquire); then nothing changes and the error is SystemError.
func (a *applier) setNodeACL(n *node, list []jute.ACL, aversion int32) error {
	a.t.preserve(n)
	ref, ok := a.t.acls.acquire(list)
	if !ok {
		return jute.ErrSystemError
	}
	a.t.acls.release(n.acl())
	n.setACL(ref)
	n.extend().aversion = aversion
	return nil
}
