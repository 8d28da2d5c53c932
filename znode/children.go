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
	list   []childEntry // sorted by name; unused while table or shards is
	table  childTable   // in use when table.ctrl is not nil
	shards *childShards // in use when not nil
}

// childEntry is one child.
type childEntry struct {
	name string
	n    *node
}

// cmpEntry orders entries by name.
func cmpEntry(a, b childEntry) int { return strings.Compare(a.name, b.name) }

// big reports whether the set is a table or shards.
func (c *childSet) big() bool { return c.table.ctrl != nil || c.shards != nil }

// len is the number of children.
func (c *childSet) len() int {
	switch {
	case c.shards != nil:
		return c.shards.n
	case c.table.ctrl != nil:
		return int(c.table.n)
	}
	return len(c.list)
}

// get returns the child called name, or nil.
func (c *childSet) get(name string) *node {
	switch {
	case c.shards != nil:
		return c.shards.get(name, hashName(name))
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
	switch {
	case c.shards != nil:
		c.shards.add(name, n, hashName(name))
		return
	case c.table.ctrl != nil && c.table.n < maxTableEntries:
		c.table.add(name, n, hashName(name))
		return
	case c.table.ctrl != nil:
		c.shards = newChildShards(&c.table)
		c.table = childTable{}
		c.shards.add(name, n, hashName(name))
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
	switch {
	case c.shards != nil:
		c.shards.remove(name, hashName(name))
		if c.shards.n >= maxTableEntries/4 {
			return c.shards.n
		}
		c.table = c.shards.merge()
		c.shards = nil
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
	start := len(dst)
	c.each(func(name string, _ *node) { dst = append(dst, name) })
	slices.Sort(dst[start:])
	return dst
}

// each calls f for every child, in no particular order: f must not depend
// on the order (nothing that reaches a client or a snapshot may).
func (c *childSet) each(f func(name string, n *node)) {
	switch {
	case c.shards != nil:
		c.shards.each(f)
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
	switch {
	case c.shards != nil:
		for i := range c.shards.tables {
			c.shards.tables[i].eachEntry(f)
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
	switch {
	case c.shards != nil:
		start := len(dst)
		for ; cur.shard < shardCount; cur.shard, cur.at = cur.shard+1, 0 {
			var done bool
			dst, cur.at, done = c.shards.tables[cur.shard].copyGroups(dst, cur.at, max-(len(dst)-start))
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

// clone copies the set, replacing each child by copyNode(child).
func (c *childSet) clone(copyNode func(*node) *node) childSet {
	switch {
	case c.shards != nil:
		return childSet{shards: c.shards.clone(copyNode)}
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
