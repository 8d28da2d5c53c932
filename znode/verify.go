package znode

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ErrInconsistent is wrapped by every error of Tree.Verify.
var ErrInconsistent = errors.New("znode: inconsistent tree")

// Verify checks that everything the tree derives from its nodes agrees with
// them: the node count, data size and ephemeral count; every live
// session's ephemeral index against the ephemerals it owns; the reaper
// index against the container and TTL nodes; the large-directory index;
// every ACL reference count against the nodes holding it; and the quota
// trie. It returns nil or an error wrapping ErrInconsistent that names
// the first disagreement found. It walks the whole tree (O(nodes), a path
// string built only for the nodes an index names): ReadSnapshot runs it
// after loading, tests after every step.
func (t *Tree) Verify() error {
	if t.root == nil {
		return inconsistent("no root")
	}
	v := verifier{
		t:       t,
		refs:    make([]int, len(t.acls.lists)),
		owned:   make(map[int64]map[string]struct{}),
		reap:    make(map[string]struct{}),
		parents: make(map[string]struct{}),
	}
	if err := v.walk(t.root, make([]byte, 0, 256), true); err != nil {
		return err
	}
	for _, check := range []func() error{v.counters, v.sessions, v.reapable, v.parentIndex, v.aclCache, t.quotas.verify} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func inconsistent(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInconsistent, fmt.Sprintf(format, args...))
}

// verifier is what Verify's walk gathers.
type verifier struct {
	t        *Tree
	count    int
	dataSize int64
	nEphem   int
	refs     []int                         // by ACL slot
	owned    map[int64]map[string]struct{} // ephemeral paths by owner
	reap     map[string]struct{}           // container and TTL paths
	parents  map[string]struct{}           // paths of nodes the parents index must hold
}

// walk visits n, at path (the root's is "/", written as ""), and below.
func (v *verifier) walk(n *node, path []byte, root bool) (err error) {
	p := path
	if root {
		p = []byte(RootPath)
	}
	v.count++
	v.dataSize += int64(len(p) + len(n.data))
	ref := int(n.acl())
	if ref >= len(v.refs) || v.t.acls.lists[ref].list == nil {
		return inconsistent("%q: ACL slot %d is not in use", p, ref)
	}
	v.refs[ref]++
	switch n.kind() {
	case kindEphemeral:
		v.nEphem++
		if n.numChildren() > 0 {
			return inconsistent("ephemeral %q has children", p)
		}
		if v.owned[n.owner] == nil {
			v.owned[n.owner] = make(map[string]struct{})
		}
		v.owned[n.owner][string(p)] = struct{}{}
	case kindContainer, kindTTL:
		v.reap[string(p)] = struct{}{}
	case kindPersistent:
		if n.owner != 0 {
			return inconsistent("persistent %q: owner %d", p, n.owner)
		}
	}
	kids := n.children()
	if kids == nil {
		if n.descendants() != 0 {
			return inconsistent("%q counts %d descendants; it has none", p, n.descendants())
		}
		return nil
	}
	if !root && kids.len() > smallChildren {
		v.parents[string(p)] = struct{}{}
	}
	before := v.count
	defer func() { // after the children's walk
		if got := int64(v.count - before); err == nil && n.descendants() != got {
			err = inconsistent("%q counts %d descendants; it has %d", p, n.descendants(), got)
		}
	}()
	if kids.len() > nameIndexMin/2 {
		names := make([]string, 0, kids.len())
		kids.each(func(name string, _ *node) { names = append(names, name) })
		slices.Sort(names)
		if ierr := kids.checkIndex(names); ierr != nil {
			return inconsistent("%q: %v", p, ierr)
		}
	}
	kids.each(func(name string, c *node) {
		if err != nil {
			return
		}
		if name == "" || strings.IndexByte(name, '/') >= 0 {
			err = inconsistent("%q: child named %q", p, name)
			return
		}
		child := append(append(path, '/'), name...)
		err = v.walk(c, child, false)
	})
	return err
}

// counters compares the tree's counters with the walk's.
func (v *verifier) counters() error {
	t := v.t
	if v.count != t.count || v.dataSize != t.dataSize || v.nEphem != t.nEphem {
		return inconsistent("counters: %d nodes, %d bytes, %d ephemerals recorded; %d, %d, %d in the tree",
			t.count, t.dataSize, t.nEphem, v.count, v.dataSize, v.nEphem)
	}
	return nil
}

// sessions checks that each live session indexes exactly the ephemerals
// it owns. Ephemerals of a session not in the table are allowed: an
// imported fuzzy snapshot holds them until SettleEphemerals.
func (v *verifier) sessions() error {
	for id, s := range v.t.sessions {
		if s.info.ID != id {
			return inconsistent("session %#x recorded as %#x", id, s.info.ID)
		}
		own := v.owned[id]
		if len(own) != s.numEphemerals() {
			return inconsistent("session %#x: %d ephemerals indexed, owns %d", id, s.numEphemerals(), len(own))
		}
		if s.ephemerals == nil {
			continue
		}
		sorted := slices.Sorted(maps.Keys(own))
		if err := s.ephemerals.check(sorted); err != nil {
			return inconsistent("session %#x: ephemeral index: %v", id, err)
		}
	}
	return nil
}

// reapable checks the reaper index against the container and TTL nodes.
func (v *verifier) reapable() error {
	if len(v.reap) != len(v.t.reapable) || len(v.t.reapOrder) != len(v.t.reapable) {
		return inconsistent("reaper index: %d paths (%d in order), %d container and TTL nodes",
			len(v.t.reapable), len(v.t.reapOrder), len(v.reap))
	}
	for p, i := range v.t.reapable {
		if _, ok := v.reap[p]; !ok {
			return inconsistent("reaper index holds %q, no container or TTL node", p)
		}
		if i < 0 || i >= len(v.t.reapOrder) || v.t.reapOrder[i] != p {
			return inconsistent("reaper index: %q at place %d, which holds another path", p, i)
		}
	}
	return nil
}

// parentIndex checks the large-directory index: every node with more than
// smallChildren children is in it, and every entry is the nodeExt of the
// node at its path, which has more than smallChildren/2 children.
func (v *verifier) parentIndex() error {
	for p := range v.parents {
		if _, ok := v.t.parents[p]; !ok {
			return inconsistent("directory %q is not in the parents index", p)
		}
	}
	for p, e := range v.t.parents {
		n := v.t.walk(p)
		if n == nil || n.ext != e {
			return inconsistent("parents index holds %q, not that node", p)
		}
		if n.numChildren() <= smallChildren/2 {
			return inconsistent("parents index holds %q with %d children", p, n.numChildren())
		}
	}
	return nil
}

// aclCache checks every slot's reference count against the nodes, the
// key map against the slots, and the free list.
func (v *verifier) aclCache() error {
	c := v.t.acls
	live := 0
	for i, e := range c.lists {
		if e.list == nil {
			if e.refs != 0 || v.refs[i] != 0 {
				return inconsistent("free ACL slot %d: %d refs, %d nodes", i, e.refs, v.refs[i])
			}
			continue
		}
		live++
		if e.refs != v.refs[i] || e.refs <= 0 {
			return inconsistent("ACL slot %d: %d refs, held by %d nodes", i, e.refs, v.refs[i])
		}
		if e.key != ACLKey(e.list) {
			return inconsistent("ACL slot %d: key does not match its list", i)
		}
		if r, ok := c.slots[e.key]; !ok || int(r) != i {
			return inconsistent("ACL slot %d: its key maps to slot %d", i, r)
		}
	}
	if live != len(c.slots) || live+len(c.free) != len(c.lists) {
		return inconsistent("ACL cache: %d live slots, %d keys, %d free of %d", live, len(c.slots), len(c.free), len(c.lists))
	}
	seen := make(map[aclRef]bool, len(c.free))
	for _, r := range c.free {
		if int(r) >= len(c.lists) || c.lists[r].list != nil || seen[r] {
			return inconsistent("ACL free list holds slot %d", r)
		}
		seen[r] = true
	}
	if err := c.verifyNamed(); err != nil {
		return inconsistent("ACL cache: %v", err)
	}
	return nil
}
