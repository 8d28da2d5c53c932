package znode

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"

	"github.com/zkraft/zkraft/jute"
)

// aclRef names an interned ACL list: its slot in the aclCache. Nodes hold
// an aclRef (4 bytes, packed with the node kind) instead of a slice header.
type aclRef uint32

// maxACLLists bounds the slots so an aclRef fits beside the node kind in a
// node's meta word (see node.go). Every live list is held by at least one
// node, so the bound is out of reach of any tree that fits in memory.
const maxACLLists = 1 << (32 - kindBits)

// aclCache interns ACL lists so nodes with equal lists share one slice. It
// counts references so lists no node uses any more are dropped and their
// slots reused.
//
// named indexes the lists by the identities they name: for each Id, how
// many interned lists hold an entry for it (a list naming an Id twice
// counts once). It is kept by add and drop, the only places a list enters
// or leaves the cache, so NamesIdentity is one map lookup however many
// lists there are.
type aclCache struct {
	slots map[string]aclRef // ACLKey(list) -> slot
	lists []aclEntry        // by slot; a free slot has refs 0 and a nil list
	free  []aclRef          // free slots, the last freed reused first
	key   []byte            // acquire's scratch for a list's key
	named map[jute.Id]int32 // Id -> interned lists naming it
}

// aclEntry is one interned list.
type aclEntry struct {
	list []jute.ACL
	key  string // ACLKey(list), so release need not recompute it
	refs int
}

func newACLCache() *aclCache {
	return &aclCache{slots: make(map[string]aclRef), named: make(map[jute.Id]int32)}
}

// ACLKey is a canonical string for an ACL list (order-sensitive, as in
// ZooKeeper): equal lists have equal keys, and unequal lists unequal keys.
// Every field is length-prefixed, so no id (which may hold any byte, NUL
// included) can make one list encode like another.
func ACLKey(list []jute.ACL) string {
	return string(appendACLKey(nil, list))
}

// appendACLKey appends ACLKey(list) to b: per entry, the perms as 4 bytes,
// then the scheme and the id each as a 4-byte length and the bytes.
func appendACLKey(b []byte, list []jute.ACL) []byte {
	for _, a := range list {
		b = binary.BigEndian.AppendUint32(b, uint32(a.Perms))
		b = binary.BigEndian.AppendUint32(b, uint32(len(a.ID.Scheme)))
		b = append(b, a.ID.Scheme...)
		b = binary.BigEndian.AppendUint32(b, uint32(len(a.ID.ID)))
		b = append(b, a.ID.ID...)
	}
	return b
}

// acquire interns list and takes a reference on it. ok is false only when
// the list is new and every one of the maxACLLists slots is in use. A list
// already interned costs no allocation.
func (c *aclCache) acquire(list []jute.ACL) (ref aclRef, ok bool) {
	c.key = appendACLKey(c.key[:0], list)
	ref, found := c.slots[string(c.key)] // the conversion does not allocate
	if !found {
		cp := make([]jute.ACL, len(list))
		copy(cp, list)
		if ref, ok = c.add(string(c.key), cp); !ok {
			return 0, false
		}
	}
	c.lists[ref].refs++
	return ref, true
}

// add stores a list not yet interned, with no references, in a free slot.
func (c *aclCache) add(key string, list []jute.ACL) (aclRef, bool) {
	var ref aclRef
	if n := len(c.free); n > 0 {
		ref = c.free[n-1]
		c.free = c.free[:n-1]
	} else {
		if len(c.lists) >= maxACLLists {
			return 0, false
		}
		ref = aclRef(len(c.lists))
		c.lists = append(c.lists, aclEntry{})
	}
	c.lists[ref] = aclEntry{list: list, key: key}
	c.slots[key] = ref
	eachID(list, func(id jute.Id) { c.named[id]++ })
	return ref, true
}

// eachID calls f once for each distinct Id list names. A short list is
// walked pairwise; a long one (an ACL may hold thousands of entries) uses
// a set, so interning stays linear.
func eachID(list []jute.ACL, f func(jute.Id)) {
	if len(list) > 16 {
		seen := make(map[jute.Id]struct{}, len(list))
		for _, a := range list {
			if _, dup := seen[a.ID]; !dup {
				seen[a.ID] = struct{}{}
				f(a.ID)
			}
		}
		return
	}
outer:
	for i, a := range list {
		for _, b := range list[:i] {
			if b.ID == a.ID {
				continue outer
			}
		}
		f(a.ID)
	}
}

// release drops a reference taken by acquire; the last one frees the slot.
func (c *aclCache) release(ref aclRef) {
	e := &c.lists[ref]
	e.refs--
	if e.refs <= 0 {
		c.drop(ref)
	}
}

// drop frees a slot.
func (c *aclCache) drop(ref aclRef) {
	eachID(c.lists[ref].list, func(id jute.Id) {
		if c.named[id]--; c.named[id] <= 0 {
			delete(c.named, id)
		}
	})
	delete(c.slots, c.lists[ref].key)
	c.lists[ref] = aclEntry{}
	c.free = append(c.free, ref)
}

// list returns the interned list in slot ref. It must not be modified.
func (c *aclCache) list(ref aclRef) []jute.ACL { return c.lists[ref].list }

// len is the number of interned lists.
func (c *aclCache) len() int { return len(c.slots) }

// clone copies the cache; the lists themselves are immutable and shared.
func (c *aclCache) clone() *aclCache {
	return &aclCache{slots: maps.Clone(c.slots), lists: slices.Clone(c.lists), free: slices.Clone(c.free),
		named: maps.Clone(c.named)}
}

// names reports whether an interned list names id.
func (c *aclCache) names(id jute.Id) bool { return c.named[id] > 0 }

// verifyNamed checks the named index against the lists (Tree.Verify).
func (c *aclCache) verifyNamed() error {
	want := make(map[jute.Id]int32, len(c.named))
	for _, e := range c.lists {
		eachID(e.list, func(id jute.Id) { want[id]++ })
	}
	if len(want) != len(c.named) {
		return fmt.Errorf("%d identities named by the lists, %d indexed", len(want), len(c.named))
	}
	for id, n := range want {
		if c.named[id] != n {
			return fmt.Errorf("identity %s:%q named by %d lists, indexed as %d", id.Scheme, id.ID, n, c.named[id])
		}
	}
	return nil
}

// NamesIdentity reports whether the ACL of any node in the tree names id
// (any permissions): for the console, whether a digest identity is one the
// ensemble knows. It is one map lookup, so a caller may hold the tree's
// read lock for it while writes wait.
func (t *Tree) NamesIdentity(id jute.Id) bool { return t.acls.names(id) }
