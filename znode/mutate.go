package znode

import "github.com/zkraft/zkraft/jute"

// The mutation primitives below are the only code that changes the tree
// during Apply. Each records its inverse so a failed multi can roll back.

// insert adds n at path under parent (whose child name is name), registering
// ephemerals with their session and maintaining the counters.
func (a *applier) insert(path string, parent *node, name string, n *node) {
	t := a.t
	n.acl = t.acls.acquire(n.acl)
	t.nodes[path] = n
	parent.addChild(name)
	t.dataSize += int64(len(path) + len(n.data))
	if n.kind == kindEphemeral {
		t.addEphemeral(n.owner, path)
	}
	t.quotaChanged(path, name, 1, int64(len(n.data)))
	a.onUndo(func() { a.removeRaw(path, parent, name, n) })
}

// remove deletes the node at path from the tree.
func (a *applier) remove(path string, parent *node, name string, n *node) {
	a.removeRaw(path, parent, name, n)
	a.onUndo(func() {
		t := a.t
		n.acl = t.acls.acquire(n.acl)
		t.nodes[path] = n
		parent.addChild(name)
		t.dataSize += int64(len(path) + len(n.data))
		if n.kind == kindEphemeral {
			t.addEphemeral(n.owner, path)
		}
		t.quotaChanged(path, name, 1, int64(len(n.data)))
	})
}

// removeRaw deletes without recording an undo.
func (a *applier) removeRaw(path string, parent *node, name string, n *node) {
	t := a.t
	delete(t.nodes, path)
	parent.removeChild(name)
	t.acls.release(n.acl)
	t.dataSize -= int64(len(path) + len(n.data))
	if n.kind == kindEphemeral {
		t.removeEphemeral(n.owner, path)
	}
	t.quotaChanged(path, name, -1, -int64(len(n.data)))
}

// setChildMeta sets a parent's stored cversion and pzxid.
func (a *applier) setChildMeta(p *node, cversion int32, pzxid int64) {
	oc, op := p.cversion, p.pzxid
	p.cversion, p.pzxid = cversion, pzxid
	a.onUndo(func() { p.cversion, p.pzxid = oc, op })
}

// setNodeData replaces a node's data and data metadata.
func (a *applier) setNodeData(path string, n *node, data []byte, version int32, zxid, mtime int64) {
	od, ov, oz, om := n.data, n.version, n.mzxid, n.mtime
	delta := int64(len(data) - len(od))
	n.data, n.version, n.mzxid, n.mtime = data, version, zxid, mtime
	a.t.dataSize += delta
	a.t.quotaBytes(path, delta)
	a.onUndo(func() {
		n.data, n.version, n.mzxid, n.mtime = od, ov, oz, om
		a.t.dataSize -= delta
		a.t.quotaBytes(path, -delta)
	})
}

// setNodeACL replaces a node's ACL and aversion (setACL is not allowed in
// a multi, so no undo is needed).
func (a *applier) setNodeACL(n *node, list []jute.ACL, aversion int32) {
	old := n.acl
	n.acl = a.t.acls.acquire(list)
	a.t.acls.release(old)
	n.aversion = aversion
}

// addEphemeral registers an ephemeral path with its session.
func (t *Tree) addEphemeral(owner int64, path string) {
	t.nEphem++
	if s := t.sessions[owner]; s != nil {
		if s.ephemerals == nil {
			s.ephemerals = make(map[string]struct{})
		}
		s.ephemerals[path] = struct{}{}
	}
}

// removeEphemeral unregisters an ephemeral path.
func (t *Tree) removeEphemeral(owner int64, path string) {
	t.nEphem--
	if s := t.sessions[owner]; s != nil {
		delete(s.ephemerals, path)
	}
}
