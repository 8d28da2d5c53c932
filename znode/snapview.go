package znode

import (
	"errors"
	"io"
	"slices"
)

// A SnapshotView is the tree as it stood at BeginSnapshot, written out
// while Apply goes on, without a copy of the tree and without holding the
// tree's lock for more than a short chunk of nodes at a time.
//
// While a view is open, the mutation primitives (mutate.go) first save a
// pre-image of any node that existed when the view began: its fields, and
// its child set as a copy that still points at the original children.
// The writer walks the tree from the root as it was, reading each node
// from its pre-image if it has one, and from the live node otherwise
// (a live node without a pre-image has not changed since the view began,
// and its child set neither: a change to that set saves the node first).
// Nodes created after the view began are never reached, since the child
// sets the walk reads are those of the beginning.
//
// The caller serializes the tree's use as for Apply: BeginSnapshot and
// Close under the exclusive lock, WriteSnapshot given a read-lock pair it
// takes for each chunk.
type SnapshotView struct {
	t     *Tree
	st    snapState // zxid, count, a copy of the ACL cache, sessions, quotas
	root  *node
	pre   map[*node]*node // pre-images; written by Apply, read by the walk
	chunk int             // nodes per lock hold
}

// viewChunk is how many nodes the walk reads per hold of the lock.
const viewChunk = 1024

// ErrViewOpen is returned by BeginSnapshot while another view is open.
var ErrViewOpen = errors.New("znode: a snapshot view is already open")

// BeginSnapshot opens a view of the tree as it is now. It costs a copy of
// the session table and the ACL cache, not of the nodes.
func (t *Tree) BeginSnapshot() (*SnapshotView, error) {
	if t.view != nil {
		return nil, ErrViewOpen
	}
	st := t.state()
	st.acls = t.acls.clone()
	v := &SnapshotView{t: t, st: st, root: t.root, pre: make(map[*node]*node), chunk: viewChunk}
	t.view = v
	return v, nil
}

// Close ends the view: Apply stops saving pre-images. Call it under the
// exclusive lock, whether or not the view was written.
func (v *SnapshotView) Close() {
	if v.t.view == v {
		v.t.view = nil
	}
	v.pre = nil
}

// preserve saves n's pre-image for the open view, if n was in the tree
// when the view began and has none yet. Every mutation primitive calls it
// before it changes a node.
func (t *Tree) preserve(n *node) {
	v := t.view
	if v == nil || n.czxid > v.st.zxid {
		return // no view, or a node created since it began
	}
	if _, ok := v.pre[n]; ok {
		return
	}
	cp := *n
	if n.ext != nil {
		ext := *n.ext
		ext.kids = n.ext.kids.clone(func(c *node) *node { return c })
		cp.ext = &ext
	}
	v.pre[n] = &cp
}

// image is n as it was when the view began.
func (v *SnapshotView) image(n *node) *node {
	if p, ok := v.pre[n]; ok {
		return p
	}
	return n
}

// viewFrame is a node whose children the walk has still to visit.
type viewFrame struct {
	n      *node // whose child set (as the view began) is being copied
	prefix string
	kids   []childEntry // the walk's own copy, sorted once sorted is set
	cur    childCursor  // how far the copy got
	copied bool
	sorted bool
	next   int
}

// bigSort is the child-set size the walk sorts with the lock released.
const bigSort = 1024

// copyPerNode is how many child entries a chunk copies in place of
// visiting one node.
const copyPerNode = 16

// WriteSnapshot writes the view as Tree.WriteSnapshot would have written
// the tree when the view began. lock and unlock take and release the
// tree's lock for reading (Apply must not run while it is held); the walk
// holds it for one chunk of work at a time and writes to w only without
// it. A big child set is copied over several chunks (resuming in the
// node's pre-image if it changed in between: a pre-image keeps the
// layout) and sorted outside the lock.
func (v *SnapshotView) WriteSnapshot(w io.Writer, lock, unlock func()) error {
	if v.pre == nil {
		return errors.New("znode: snapshot view closed")
	}
	return writeSnapshot(w, v.st, func(sw *snapWriter, put func(string, *node)) {
		var stack []viewFrame
		// visit writes n (at path) and queues its children for copying.
		visit := func(path string, n *node) {
			img := v.image(n)
			put(path, img)
			kids := img.children()
			if kids == nil {
				return
			}
			prefix := path + "/"
			if path == RootPath {
				prefix = RootPath
			}
			stack = append(stack, viewFrame{n: n, prefix: prefix, kids: make([]childEntry, 0, kids.len())})
		}
		budget := v.chunk
		release := func() { // end a chunk: the lock is free while the staged frames are written
			unlock()
			sw.flushStage()
		}
		resume := func() {
			lock()
			sw.startStage()
			budget = v.chunk
		}
		resume()
		visit(RootPath, v.root)
		for len(stack) > 0 {
			if budget <= 0 {
				release()
				resume()
			}
			top := &stack[len(stack)-1]
			switch {
			case !top.copied:
				before := len(top.kids)
				top.kids, top.cur, top.copied = v.image(top.n).children().copyPart(top.kids, top.cur, budget*copyPerNode)
				budget -= (len(top.kids)-before)/copyPerNode + 1
			case !top.sorted:
				if len(top.kids) > bigSort {
					release()
					slices.SortFunc(top.kids, cmpEntry)
					resume()
				} else {
					slices.SortFunc(top.kids, cmpEntry)
				}
				top.sorted = true
			case top.next == len(top.kids):
				stack = stack[:len(stack)-1]
			default:
				e := top.kids[top.next]
				top.kids[top.next] = childEntry{}
				top.next++
				budget--
				visit(top.prefix+e.name, e.n)
			}
		}
		release()
	})
}
