package znode

import "github.com/zkraft/zkraft/jute"

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
	n := lookupChild(parent, req.Path, name)
	if n == nil {
		return jute.ErrNoNode
	}
	if _, err := checkVersion(n.version, req.Version); err != nil {
		return err
	}
	if n.numChildren() > 0 {
		return jute.ErrNotEmpty
	}
	return a.deleteNode(req.Path, parentPath, name, parent, n)
}

// deleteNode removes a childless node, updates the parent's pzxid (only
// forward, as DataTree.deleteNode) and fires NodeDeleted then
// NodeChildrenChanged. The parent's stored cversion is unchanged: clients
// see the delete through cversion*2 - numChildren.
func (a *applier) deleteNode(path, parentPath, name string, parent, n *node) error {
	acl := a.t.aclOf(n)
	if err := a.remove(path, parent, name, n); err != nil {
		return err
	}
	if a.zxid > parent.pzxid() {
		a.setChildMeta(parent, parent.cversion(), a.zxid)
	}
	a.fire(path, jute.EventNodeDeleted, acl)
	a.fire(eventPath(parentPath), jute.EventNodeChildrenChanged, a.t.aclOf(parent))
	return nil
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
	n := lookupChild(parent, path, name)
	if n == nil {
		return jute.ErrNoNode
	}
	if n.numChildren() > 0 {
		return jute.ErrNotEmpty
	}
	if !a.t.eligible(n, a.txn.Time) {
		return jute.ErrBadVersion
	}
	return a.deleteNode(path, parentPath, name, parent, n)
}
