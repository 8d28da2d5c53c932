package znode

import (
	"github.com/zkraft/zkraft/acl"
	"github.com/zkraft/zkraft/jute"
)

// Reads follow FinalRequestProcessor: paths are not validated (a malformed
// path is simply not found; "" is the root, as in ZooKeeper), and the
// permission check comes after the existence check. Errors are jute.ErrCode.

// Exists returns the node's Stat; READ is required when the node exists
// (3.8.4+). A path containing NUL is BadArguments.
func (t *Tree) Exists(path string, ids []jute.Id) (jute.Stat, error) {
	if hasNUL(path) {
		return jute.Stat{}, jute.ErrBadArguments
	}
	n := t.lookup(path)
	if n == nil {
		return jute.Stat{}, jute.ErrNoNode
	}
	if !t.Permits(t.aclOf(n), jute.PermRead, ids) {
		return jute.Stat{}, jute.ErrNoAuth
	}
	return n.stat(), nil
}

// GetData returns the node's data (immutable: safe to keep after unlocking;
// nil when the node was created with null data) and Stat. Requires READ.
func (t *Tree) GetData(path string, ids []jute.Id) ([]byte, jute.Stat, error) {
	n, err := t.readable(path, jute.PermRead, ids)
	if err != nil {
		return nil, jute.Stat{}, err
	}
	return n.data, n.stat(), nil
}

// GetChildren returns the node's child names, sorted, and its Stat.
// Requires READ. It copies the names: a caller that encodes them after
// releasing the tree's lock uses ChildNames instead.
func (t *Tree) GetChildren(path string, ids []jute.Id) ([]string, jute.Stat, error) {
	names, stat, err := t.ChildNames(path, ids)
	if err != nil {
		return nil, stat, err
	}
	return names.AppendTo(make([]string, 0, names.Len())), stat, nil
}

// ChildNames returns the node's child names, sorted, and its Stat, as
// GetChildren does, but as an immutable ChildNames that stays valid after
// the tree's lock is released. It takes constant time for a large
// directory (one with a name index) and at most a sort of nameIndexMin
// names otherwise, so a reader listing a directory of any size holds the
// lock for a bounded time. Requires READ.
func (t *Tree) ChildNames(path string, ids []jute.Id) (ChildNames, jute.Stat, error) {
	n, err := t.readable(path, jute.PermRead, ids)
	if err != nil {
		return ChildNames{}, jute.Stat{}, err
	}
	var names ChildNames
	if kids := n.children(); kids != nil {
		names = kids.view()
	}
	return names, n.stat(), nil
}

// GetACL returns the node's ACL and Stat. It requires READ or ADMIN; a
// caller without ADMIN gets digest ids masked as "user:x". The returned slice
// must not be modified.
func (t *Tree) GetACL(path string, ids []jute.Id) ([]jute.ACL, jute.Stat, error) {
	n, err := t.readable(path, jute.PermRead|jute.PermAdmin, ids)
	if err != nil {
		return nil, jute.Stat{}, err
	}
	list := t.aclOf(n)
	if !t.Permits(list, jute.PermAdmin, ids) {
		list = acl.MaskDigests(list)
	}
	return list, n.stat(), nil
}

// GetAllChildrenNumber returns the number of descendants of path. For "/"
// it is every node but the root (ZooKeeper's nodes.size()-2). Requires READ.
func (t *Tree) GetAllChildrenNumber(path string, ids []jute.Id) (int32, error) {
	n, err := t.readable(path, jute.PermRead, ids)
	if err != nil {
		return 0, err
	}
	switch path {
	case RootPath:
		return int32(t.count - 1), nil
	case "":
		// ZooKeeper counts the paths starting with path+"/": for "" that
		// is every node, the root included.
		return int32(t.count), nil
	}
	return int32(n.descendants()), nil
}

// NodeACL returns a node's ACL without any check (for watch filtering). The
// slice must not be modified.
func (t *Tree) NodeACL(path string) ([]jute.ACL, bool) {
	n := t.lookup(path)
	if n == nil {
		return nil, false
	}
	return t.aclOf(n), true
}

// readable looks a node up and checks perm on it.
func (t *Tree) readable(path string, perm int32, ids []jute.Id) (*node, error) {
	n := t.lookup(path)
	if n == nil {
		return nil, jute.ErrNoNode
	}
	if !t.Permits(t.aclOf(n), perm, ids) {
		return nil, jute.ErrNoAuth
	}
	return n, nil
}
