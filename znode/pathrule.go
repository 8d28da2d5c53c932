package znode

import (
	"fmt"

	"github.com/zkraft/zkraft/jute"
)

// The path rule. ZooKeeper's DataTree is a map from a path string to a
// node, so a path names a node only when spelled exactly as that node's
// path: "//x", "/x/" and "/x/./y" name nothing, even when "/x" exists.
// Each write checks its path once, at the edge of Apply, exactly as
// PrepRequestProcessor checks it for that op:
//
//   - create: a slash and no NUL (validatePathForCreate), else
//     BadArguments; the parent is found by its exact path, else NoNode;
//     after CREATE permission and the sequential suffix, the whole path
//     must pass ValidatePath, else BadArguments.
//   - delete, deleteContainer: a slash, no NUL and no system node
//     (getParentPathAndValidate), else BadArguments; parent and node are
//     found by their exact paths, else NoNode.
//   - setData, setACL, check: ValidatePath, else BadArguments.
//
// Past the edge every path is canonical (what ValidatePath accepts, the
// spelling of a node's path): the mutation primitives assert it
// (mustCanonical), and a path that is not is a bug answered with an error
// before anything changes. Lookups never normalise: lookup walks exact
// segments, and lookupChild refuses a child named through an alias of its
// parent ("//x" is not the path of the root's child "x").

// errNonCanonical is wrapped by mustCanonical's error.
var errNonCanonical = fmt.Errorf("%w: non-canonical path reached the tree", jute.ErrSystemError)

// canonical reports whether path is spelled as a node's path is.
func canonical(path string) bool { return ValidatePath(path) == nil }

// mustCanonical fails unless path is canonical: the edge checks of Apply
// let no other path through, so one reaching a mutation is a bug.
func mustCanonical(path string) error {
	if !canonical(path) {
		return fmt.Errorf("%w: %q", errNonCanonical, path)
	}
	return nil
}

// lookupChild returns the node at path, whose parent (found by its exact
// path) is parent and whose last segment is name, or nil when there is
// none or path is not spelled as a node's path is.
func lookupChild(parent *node, path, name string) *node {
	if !canonical(path) {
		return nil
	}
	return parent.child(name)
}

// parentForCreate is validatePathForCreate: a path without a slash or with
// a NUL is BadArguments. It returns the parent path as ZooKeeper computes
// it ("" for children of the root).
func parentForCreate(path string) (string, error) {
	parent, _, ok := splitPath(path)
	if !ok || hasNUL(path) {
		return "", jute.ErrBadArguments
	}
	return parent, nil
}

// parentForDelete is getParentPathAndValidate: paths without a slash, with
// a NUL, or naming a system node are BadArguments.
func parentForDelete(path string) (parent, name string, err error) {
	parent, name, ok := splitPath(path)
	if !ok || hasNUL(path) || isSpecial(path) {
		return "", "", jute.ErrBadArguments
	}
	return parent, name, nil
}

// hasNUL reports a NUL character in path.
func hasNUL(path string) bool {
	for i := 0; i < len(path); i++ {
		if path[i] == 0 {
			return true
		}
	}
	return false
}
