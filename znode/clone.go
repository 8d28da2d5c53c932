package znode

import (
	"maps"
	"runtime"
	"slices"
	"sync"
)

// Clone returns an independent copy of the tree and session table. Data and
// ACL slices are immutable and therefore shared; everything mutable is
// copied. It lets a caller hold its lock only for the copy and then write a
// snapshot of the clone (WriteSnapshot) while Apply goes on with the
// original.
func (t *Tree) Clone() *Tree {
	a := cloneArena{chunk: min(cloneChunk, t.count+1), split: t.count >= parallelCloneMin && runtime.GOMAXPROCS(0) > 1}
	root := a.node(t.root)
	a.finish()
	c := &Tree{
		opts:      t.opts,
		root:      root,
		count:     t.count,
		sessions:  make(map[int64]*session, len(t.sessions)),
		acls:      t.acls.clone(),
		lastZxid:  t.lastZxid,
		dataSize:  t.dataSize,
		nEphem:    t.nEphem,
		parents:   make(map[string]*nodeExt, len(t.parents)),
		reapable:  maps.Clone(t.reapable),
		reapOrder: slices.Clone(t.reapOrder),
		quotas:    t.quotas.clone(),
	}
	for p := range t.parents {
		c.parents[p] = c.walk(p).ext
	}
	for id, s := range t.sessions {
		cs := &session{info: s.info, idKeys: s.idKeys} // both never changed in place
		if s.ephemerals != nil {
			cs.ephemerals = s.ephemerals.clone()
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
//
// A large tree is cloned by several goroutines: the children of every node
// with at least splitMinKids of them are left pointing at the originals
// (deferred), and finish clones those subtrees in parallel, each worker
// with its own arena. A clone is mostly waiting on cache misses, so this
// shortens the pause even when the cores are shared.
type cloneArena struct {
	nodes    []node
	exts     []nodeExt
	chunk    int           // nodes per chunk: cloneChunk, or fewer for a small tree
	split    bool          // defer the children of nodes with many
	deferred []*childEntry // entries of the copy still pointing at originals
}

// parallelCloneMin is the node count from which a clone is split among
// goroutines; splitMinKids is how many children make a node's subtrees
// worth handing out.
const (
	parallelCloneMin = 1 << 16
	splitMinKids     = 256
)

// node copies n and, recursively, its children. The node's ACL reference
// stays valid because the cache is cloned slot for slot.
func (a *cloneArena) node(n *node) *node {
	if len(a.nodes) == cap(a.nodes) {
		a.nodes = make([]node, 0, a.chunk)
	}
	a.nodes = append(a.nodes, *n)
	cp := &a.nodes[len(a.nodes)-1]
	if n.ext != nil {
		if len(a.exts) == cap(a.exts) {
			a.exts = make([]nodeExt, 0, a.chunk)
		}
		a.exts = append(a.exts, *n.ext)
		ext := &a.exts[len(a.exts)-1]
		if a.split && n.ext.kids.len() >= splitMinKids {
			ext.kids = n.ext.kids.clone(func(n *node) *node { return n })
			a.deferred = slices.Grow(a.deferred, ext.kids.len())
			ext.kids.eachEntry(func(e *childEntry) { a.deferred = append(a.deferred, e) })
		} else {
			ext.kids = n.ext.kids.clone(a.node)
		}
		n.ext.kids.cloneIndex(&ext.kids)
		cp.ext = ext
	}
	return cp
}

// finish clones the deferred subtrees, split evenly among GOMAXPROCS
// workers (none of which defers further).
func (a *cloneArena) finish() {
	jobs := a.deferred
	a.deferred = nil
	workers := min(runtime.GOMAXPROCS(0), len(jobs))
	var wg sync.WaitGroup
	for w := range workers {
		part := jobs[w*len(jobs)/workers : (w+1)*len(jobs)/workers]
		wg.Add(1)
		go func() {
			defer wg.Done()
			wa := cloneArena{chunk: cloneChunk}
			for _, e := range part {
				e.n = wa.node(e.n)
			}
		}()
	}
	wg.Wait()
}
