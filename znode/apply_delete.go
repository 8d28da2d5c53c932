package znode

import "github.com/zkraft/zkraft/jute"

// parentForDelete is getParentPathAndValidate: paths without a slash, with a
// NUL, or naming a system node are BadArguments.
func parentForDelete(path string) (parent, name string, err error) {
	parent, name, ok := splitPath(path)
	if !ok || hasNUL(path) || isSpecial(path) {
		return "", "", jute.ErrBadArguments
	}
	return parent, name, nil
}

// delete applies delete: session, path, parent, DELETE on the parent, node,
// version, children — ZooKeeper's order.
func (a *applier) delete(req *jute.PathVersionRequest) error {
	if err := a.checkSession(); err != nil {
		return err
	}
	parentPath, name, err := parentForDelete(req.Path)
	if err != nil {
		return err
	}
	parent := a.t.lookup(parentPath)
	if parent == nil {
		return jute.ErrNoNode
	}
	if err := a.checkPerm(a.t.aclOf(parent), jute.PermDelete); err != nil {
		return err
	}
	n := parent.child(name)
	if n == nil {
		return jute.ErrNoNode
	}
	if _, err := checkVersion(n.version, req.Version); err != nil {
		return err
	}
	if n.numChildren() > 0 {
		return jute.ErrNotEmpty
	}
	a.deleteNode(req.Path, parentPath, name, parent, n)
	return nil
}

// deleteNode removes a childless node, updates the parent's pzxid (only
// forward, as DataTree.deleteNode) and fires NodeDeleted then
// NodeChildrenChanged. The parent's stored cversion is unchanged: clients
// see the delete through cversion*2 - numChildren.
func (a *applier) deleteNode(path, parentPath, name string, parent, n *node) {
	acl := a.t.aclOf(n)
	a.remove(path, parent, name, n)
	if a.zxid > parent.pzxid() {
		a.setChildMeta(parent, parent.cversion(), a.zxid)
	}
	a.fire(path, jute.EventNodeDeleted, acl)
	a.fire(eventPath(parentPath), jute.EventNodeChildrenChanged, a.t.aclOf(parent))
}

// deleteContainer applies the reaper's delete of a container or expired TTL
// node. Like ZooKeeper it needs no session and checks no ACL; unlike
// ZooKeeper it re-checks eligibility here (a container must have had a
// child, a TTL node must be expired at txn.Time), answering BadVersion when
// the node is not (or no longer) eligible.
func (a *applier) deleteContainer(path string) error {
	parentPath, name, err := parentForDelete(path)
	if err != nil {
		return err
	}
	parent := a.t.lookup(parentPath)
	if parent == nil {
		return jute.ErrNoNode
	}
	n := parent.child(name)
	if n == nil {
		return jute.ErrNoNode
	}
	if n.numChildren() > 0 {
		return jute.ErrNotEmpty
	}
	if !a.t.eligible(n, a.txn.Time) {
		return jute.ErrBadVersion
	}
	a.deleteNode(path, parentPath, name, parent, n)
	return nil
}
