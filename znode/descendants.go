package znode

import "strings"

// Every node with children counts its descendants (nodeExt.desc), so
// getAllChildrenNumber answers from one field instead of walking the
// subtree under the tree's lock. link and unlink, the only places a node
// enters or leaves the tree during Apply, adjust the count of each
// ancestor; a tree built another way (NewTree, ReadSnapshot) counts once
// with countDescendants. Verify checks every count.

// addDescendants adds delta to the descendant count of the node at
// parentPath ("" for the root) and of each of its ancestors. Each of them
// has (or, after an unlink, had) a child, so each has a nodeExt.
func (t *Tree) addDescendants(parentPath string, delta int64) {
	n := t.root
	n.extend().desc += delta
	for rest := strings.TrimPrefix(parentPath, "/"); rest != ""; {
		seg := rest
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			seg, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		if n = n.child(seg); n == nil {
			return // cannot happen: link and unlink run on canonical paths of linked parents
		}
		n.extend().desc += delta
	}
}

// countDescendants sets the descendant count of every node in n's subtree
// and returns the number of n's descendants.
func countDescendants(n *node) int64 {
	kids := n.children()
	if kids == nil {
		if n.ext != nil {
			n.ext.desc = 0
		}
		return 0
	}
	var sum int64
	kids.each(func(_ string, c *node) { sum += 1 + countDescendants(c) })
	n.ext.desc = sum
	return sum
}

// descendants is the number of n's descendants.
func (n *node) descendants() int64 {
	if n.ext == nil {
		return 0
	}
	return n.ext.desc
}
