package znode

import (
	"slices"
	"strings"
)

// smallChildren is the most children a childSet keeps in its sorted slice;
// the next one moves them into a childTable. A table turns back into a
// slice when it falls to smallChildren/2, so churn around the threshold
// does not convert on every operation.
const smallChildren = 8

// childSet is a node's children, by name. Most parents have a few children:
// those sit in a slice sorted by name (24 bytes a child, found by a short
// scan, listed without sorting). A larger set is a childTable, and above
// maxTableEntries children childShards, so lookup, insertion and deletion
// stay O(1) however many children a parent has. Names are the children's
// last path segments; nothing else in the tree stores them.
type childSet struct {
	list  []childEntry // sorted by name; unused while table or shards is
	table childTable   // in use when table.ctrl is not nil
	// large holds what only large sets have: their shards and their
	// sorted name index (nameindex.go). Nil for most sets.
	large *largeChildren
}

// largeChildren is the part of a childSet only large sets need, kept
// apart so that every other set (and nodeExt) stays small.
type largeChildren struct {
	shards *childShards // in use when not nil
	idx    *nameIndex   // above nameIndexMin children
}

// shards returns the set's shards, nil unless it is sharded.
func (c *childSet) shards() *childShards {
	if c.large == nil {
		return nil
	}
	return c.large.shards
}

// index returns the set's name index, nil if it has none.
func (c *childSet) index() *nameIndex {
	if c.large == nil {
		return nil
	}
	return c.large.idx
}

// setShards installs (or, with nil, removes) the set's shards.
func (c *childSet) setShards(s *childShards) {
	if c.large == nil {
		c.large = &largeChildren{}
	}
	c.large.shards = s
	c.tidyLarge()
}

// setIndex installs (or, with nil, removes) the set's name index.
func (c *childSet) setIndex(x *nameIndex) {
	if c.large == nil {
		c.large = &largeChildren{}
	}
	c.large.idx = x
	c.tidyLarge()
}

// tidyLarge drops an empty largeChildren.
func (c *childSet) tidyLarge() {
	if c.large.shards == nil && c.large.idx == nil {
		c.large = nil
	}
}

// childEntry is one child.
type childEntry struct {
	name string
	n    *node
}

// cmpEntry orders entries by name.
func cmpEntry(a, b childEntry) int { return strings.Compare(a.name, b.name) }

// big reports whether the set is a table or shards.
func (c *childSet) big() bool { return c.table.ctrl != nil || c.shards() != nil }

// len is the number of children.
func (c *childSet) len() int {
	switch sh := c.shards(); {
	case sh != nil:
		return sh.n
	case c.table.ctrl != nil:
		return int(c.table.n)
	}
	return len(c.list)
}

// get returns the child called name, or nil.
func (c *childSet) get(name string) *node {
	switch sh := c.shards(); {
	case sh != nil:
		return sh.get(name, hashName(name))
	case c.table.ctrl != nil:
		return c.table.get(name, hashName(name))
	}
	for i := range c.list {
		if c.list[i].name == name {
			return c.list[i].n
		}
	}
	return nil
}

// add inserts a child; name must not be in the set.
func (c *childSet) add(name string, n *node) {
	c.place(name, n)
	if x := c.index(); x != nil {
		x.insert(name)
	} else if c.len() > nameIndexMin {
		c.setIndex(newNameIndex(c.names(make([]string, 0, c.len()))))
	}
}

// place puts a child into the set's list, table or shards.
func (c *childSet) place(name string, n *node) {
	switch sh := c.shards(); {
	case sh != nil:
		sh.add(name, n, hashName(name))
		return
	case c.table.ctrl != nil && c.table.n < maxTableEntries:
		c.table.add(name, n, hashName(name))
		return
	case c.table.ctrl != nil:
		sh = newChildShards(&c.table)
		c.table = childTable{}
		sh.add(name, n, hashName(name))
		c.setShards(sh)
		return
	}
	if len(c.list) < smallChildren {
		i, _ := slices.BinarySearchFunc(c.list, childEntry{name: name}, cmpEntry)
		c.list = slices.Insert(c.list, i, childEntry{name, n})
		return
	}
	c.table = newChildTable(len(c.list) + 1)
	for _, e := range c.list {
		c.table.place(e.name, e.n, hashName(e.name))
	}
	c.table.place(name, n, hashName(name))
	c.list = nil
}

// remove deletes the child called name, if present, and returns how many
// children are left.
func (c *childSet) remove(name string) int {
	left := c.unplace(name)
	if x := c.index(); x != nil {
		if left <= nameIndexMin/2 {
			c.setIndex(nil)
		} else {
			x.remove(name)
		}
	}
	return left
}

// unplace takes a child out of the set's list, table or shards and returns
// how many are left.
func (c *childSet) unplace(name string) int {
	switch sh := c.shards(); {
	case sh != nil:
		sh.remove(name, hashName(name))
		if sh.n >= maxTableEntries/4 {
			return sh.n
		}
		c.table = sh.merge()
		c.setShards(nil)
		return int(c.table.n)
	case c.table.ctrl != nil:
		c.table.remove(name, hashName(name))
		if c.table.n > smallChildren/2 {
			return int(c.table.n)
		}
		c.list = c.sorted(make([]childEntry, 0, smallChildren))
		c.table = childTable{}
		return len(c.list)
	}
	if i, ok := slices.BinarySearchFunc(c.list, childEntry{name: name}, cmpEntry); ok {
		c.list = slices.Delete(c.list, i, i+1)
	}
	return len(c.list)
}

// sorted appends the children to dst in name order and returns it.
func (c *childSet) sorted(dst []childEntry) []childEntry {
	if !c.big() {
		return append(dst, c.list...)
	}
	start := len(dst)
	c.each(func(name string, n *node) { dst = append(dst, childEntry{name, n}) })
	slices.SortFunc(dst[start:], cmpEntry)
	return dst
}

// names appends the child names to dst in sorted order and returns it.
func (c *childSet) names(dst []string) []string {
	if !c.big() {
		for _, e := range c.list {
			dst = append(dst, e.name)
		}
		return dst
	}
	if x := c.index(); x != nil {
		return x.view().AppendTo(dst)
	}
	start := len(dst)
	c.each(func(name string, _ *node) { dst = append(dst, name) })
	slices.Sort(dst[start:])
	return dst
}

// view returns the child names as a ChildNames: the name index's current
// version for an indexed set (constant time), else a sorted copy (at most
// nameIndexMin names).
func (c *childSet) view() ChildNames {
	if x := c.index(); x != nil {
		return x.view()
	}
	list := c.names(make([]string, 0, c.len()))
	v := ChildNames{list: list, n: len(list)}
	for _, s := range list {
		v.bytes += len(s)
	}
	return v
}

// each calls f for every child, in no particular order: f must not depend
// on the order (nothing that reaches a client or a snapshot may).
func (c *childSet) each(f func(name string, n *node)) {
	switch sh := c.shards(); {
	case sh != nil:
		sh.each(f)
		return
	case c.table.ctrl != nil:
		c.table.each(f)
		return
	}
	for _, e := range c.list {
		f(e.name, e.n)
	}
}

// eachEntry calls f with a pointer to every entry, in no particular order,
// so f may replace the entry's node.
func (c *childSet) eachEntry(f func(e *childEntry)) {
	switch sh := c.shards(); {
	case sh != nil:
		for i := range sh.tables {
			sh.tables[i].eachEntry(f)
		}
		return
	case c.table.ctrl != nil:
		c.table.eachEntry(f)
		return
	}
	for i := range c.list {
		f(&c.list[i])
	}
}

// childCursor is a place in a child set's layout: an index into the
// list, or a group of the table, or a shard and a group of its table. A
// clone has its original's layout, so a cursor is valid in both.
type childCursor struct{ shard, at int }

// copyPart appends the entries from cur on to dst, stopping once at least
// max were appended, and returns dst, the cursor after them and whether
// the set ended.
func (c *childSet) copyPart(dst []childEntry, cur childCursor, max int) ([]childEntry, childCursor, bool) {
	switch sh := c.shards(); {
	case sh != nil:
		start := len(dst)
		for ; cur.shard < shardCount; cur.shard, cur.at = cur.shard+1, 0 {
			var done bool
			dst, cur.at, done = sh.tables[cur.shard].copyGroups(dst, cur.at, max-(len(dst)-start))
			if !done {
				return dst, cur, false
			}
		}
		return dst, cur, true
	case c.table.ctrl != nil:
		var done bool
		dst, cur.at, done = c.table.copyGroups(dst, cur.at, max)
		return dst, cur, done
	}
	end := min(len(c.list), cur.at+max)
	dst = append(dst, c.list[cur.at:end]...)
	cur.at = end
	return dst, cur, end == len(c.list)
}

// clone copies the set, replacing each child by copyNode(child). The copy
// has no name index (cloneIndex adds one).
func (c *childSet) clone(copyNode func(*node) *node) childSet {
	switch sh := c.shards(); {
	case sh != nil:
		return childSet{large: &largeChildren{shards: sh.clone(copyNode)}}
	case c.table.ctrl != nil:
		return childSet{table: c.table.clone(copyNode)}
	}
	if c.list == nil {
		return childSet{}
	}
	list := make([]childEntry, len(c.list))
	for i, e := range c.list {
		list[i] = childEntry{e.name, copyNode(e.n)}
	}
	return childSet{list: list}
}

// cloneIndex gives the copy cp of c a copy of c's name index, if c has one.
func (c *childSet) cloneIndex(cp *childSet) {
	if x := c.index(); x != nil {
		cp.setIndex(x.clone())
	}
}
