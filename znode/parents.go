package znode

import "strings"

// The parents index maps the path of every node with more than
// smallChildren children (and of some that have fallen back to a few) to
// the node's nodeExt (which a node keeps once it has one), so lookup finds
// a child of a large directory with one map probe and one child-table probe
// instead of walking every segment from the root.
// A node enters the index when its ninth child arrives and leaves it when
// it is down to smallChildren/2, so a node leaves before it can be unlinked
// (only childless nodes are) and the index never holds a stale node. It
// holds one path string per large directory: a few bytes a znode at most.
// Only Apply (under the writer's lock) changes it; readers only read it.

// childAdded updates the index after parent, at parentPath ("" for the
// root, which is never indexed), gained a child.
func (t *Tree) childAdded(parentPath string, parent *node) {
	if parentPath != "" && parent.numChildren() == smallChildren+1 {
		if _, ok := t.parents[parentPath]; !ok {
			t.parents[strings.Clone(parentPath)] = parent.ext
		}
	}
}

// childRemoved updates the index after parent, at parentPath, lost a child.
func (t *Tree) childRemoved(parentPath string, parent *node) {
	if parent.numChildren() == smallChildren/2 {
		delete(t.parents, parentPath)
	}
}

// indexedParent returns the nodeExt of the node at the parent path of path
// when the index holds it, and the last segment of path.
func (t *Tree) indexedParent(path string) (*nodeExt, string) {
	if len(t.parents) == 0 {
		return nil, ""
	}
	i := strings.LastIndexByte(path, '/')
	if i <= 0 {
		return nil, ""
	}
	return t.parents[path[:i]], path[i+1:]
}
