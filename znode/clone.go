package znode

import "maps"

// Clone returns an independent copy of the tree and session table. Data and
// ACL slices are immutable and therefore shared; everything mutable is
// copied. It lets a caller hold its lock only for the copy and then write a
// snapshot of the clone (WriteSnapshot) while Apply goes on with the
// original.
func (t *Tree) Clone() *Tree {
	var a cloneArena
	c := &Tree{
		opts:     t.opts,
		root:     a.node(t.root),
		count:    t.count,
		sessions: make(map[int64]*session, len(t.sessions)),
		acls:     t.acls.clone(),
		lastZxid: t.lastZxid,
		dataSize: t.dataSize,
		nEphem:   t.nEphem,
		parents:  make(map[string]*nodeExt, len(t.parents)),
		reapable: maps.Clone(t.reapable),
		quotas:   maps.Clone(t.quotas),
	}
	for p := range t.parents {
		c.parents[p] = c.walk(p).ext
	}
	for id, s := range t.sessions {
		cs := &session{info: s.info}
		if s.ephemerals != nil {
			cs.ephemerals = maps.Clone(s.ephemerals)
		}
		c.sessions[id] = cs
	}
	return c
}

// cloneChunk is how many nodes (and, separately, node extensions) a clone
// allocates at a time.
const cloneChunk = 4096

// cloneArena hands out a clone's nodes from chunks instead of one
// allocation each: a clone is made under the tree's lock, and for a large
// tree the allocator was most of that pause. A clone lives and dies as a
// whole (a snapshot being written), so a chunk is never kept alive by a
// few survivors for long.
type cloneArena struct {
	nodes []node
	exts  []nodeExt
}

// node copies n and, recursively, its children. The node's ACL reference
// stays valid because the cache is cloned slot for slot.
func (a *cloneArena) node(n *node) *node {
	if len(a.nodes) == cap(a.nodes) {
		a.nodes = make([]node, 0, cloneChunk)
	}
	a.nodes = append(a.nodes, *n)
	cp := &a.nodes[len(a.nodes)-1]
	if n.ext != nil {
		if len(a.exts) == cap(a.exts) {
			a.exts = make([]nodeExt, 0, cloneChunk)
		}
		a.exts = append(a.exts, *n.ext)
		ext := &a.exts[len(a.exts)-1]
		ext.kids = n.ext.kids.clone(a.node)
		cp.ext = ext
	}
	return cp
}
