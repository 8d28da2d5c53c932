package znode

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
)

// A child set with more than nameIndexMin children also keeps its names in
// sorted order in a nameIndex, so that getChildren on a large directory
// neither sorts under the tree's lock nor copies the names there: a reader
// takes the index's current version (ChildNames) in constant time and
// encodes it after releasing the lock.
//
// The names sit in chunks of at most nameChunkMax, each sorted, the chunks
// in order. Once a reader has taken a version (shared), the next change
// copies what it touches: the chunk slice, and each chunk it changes the
// first time (a chunk belongs to the generation that made it; one of an
// older generation may be in a reader's hands). Without readers in
// between, changes are made in place. A change thus costs a binary search,
// a move of at most nameChunkMax names and, after a read, a copy of the
// chunk list (one pointer per nameChunkMax children) and of the chunk.
// The index goes when the set falls to nameIndexMin/2 children, so churn
// around the threshold does not rebuild it on every operation.
const (
	nameIndexMin = 1024
	nameChunkMax = 128
	// nameChunkMin is the size below which a chunk merges with the next
	// one if they fit in one chunk together.
	nameChunkMin = nameChunkMax / 4
)

// nameIndex is a sorted set of strings: a large child set's names, or a
// session's ephemeral paths (where it serves getEphemerals the same way). Only the tree's writer
// changes it (under the exclusive lock); readers (under the shared lock)
// take versions of it (view), which stay valid after the lock is released.
type nameIndex struct {
	chunks []*nameChunk
	n      int // names
	bytes  int // their total length
	gen    uint64
	// shared is set by a reader that took the current version: the next
	// change starts a new generation.
	shared atomic.Bool
}

// nameChunk is a sorted run of names. It is changed in place only in the
// generation that made it.
type nameChunk struct {
	names []string
	gen   uint64
}

// newNameIndex indexes sorted names.
func newNameIndex(sorted []string) *nameIndex {
	x := &nameIndex{n: len(sorted)}
	const fill = nameChunkMax * 3 / 4 // room for inserts before a split
	for start := 0; start < len(sorted); start += fill {
		x.chunks = append(x.chunks, newChunk(sorted[start:min(start+fill, len(sorted))], 0))
	}
	for _, s := range sorted {
		x.bytes += len(s)
	}
	return x
}

// newChunk returns a chunk of generation gen holding a copy of names,
// with room for nameChunkMax+1 of them: an insert never reallocates it
// (the one past the limit splits it at once).
func newChunk(names []string, gen uint64) *nameChunk {
	buf := make([]string, len(names), nameChunkMax+1)
	copy(buf, names)
	return &nameChunk{names: buf, gen: gen}
}

// view returns the current version, and marks it shared.
func (x *nameIndex) view() ChildNames {
	x.shared.Store(true)
	return ChildNames{chunks: x.chunks, n: x.n, bytes: x.bytes}
}

// chunkFor returns the index of the chunk where name is or would go.
func (x *nameIndex) chunkFor(name string) int {
	i := sort.Search(len(x.chunks), func(i int) bool {
		c := x.chunks[i].names
		return strings.Compare(c[len(c)-1], name) >= 0
	})
	return min(i, len(x.chunks)-1)
}

// prepare starts a new generation if a reader holds the current one.
func (x *nameIndex) prepare() {
	if !x.shared.Load() {
		return
	}
	x.shared.Store(false)
	x.gen++
	x.chunks = slices.Clone(x.chunks)
}

// own returns chunk i, copied first if an older generation made it.
func (x *nameIndex) own(i int) *nameChunk {
	c := x.chunks[i]
	if c.gen != x.gen {
		c = newChunk(c.names, x.gen)
		x.chunks[i] = c
	}
	return c
}

// insert adds name, which must not be in the index.
func (x *nameIndex) insert(name string) {
	x.prepare()
	x.n++
	x.bytes += len(name)
	if len(x.chunks) == 0 {
		x.chunks = append(x.chunks, newChunk([]string{name}, x.gen))
		return
	}
	i := x.chunkFor(name)
	c := x.own(i)
	j, _ := slices.BinarySearch(c.names, name)
	c.names = slices.Insert(c.names, j, name)
	if len(c.names) <= nameChunkMax {
		return
	}
	half := len(c.names) / 2
	right := newChunk(c.names[half:], x.gen)
	clear(c.names[half:])
	c.names = c.names[:half]
	x.chunks = slices.Insert(x.chunks, i+1, right)
}

// has reports whether name is in the index.
func (x *nameIndex) has(name string) bool {
	if len(x.chunks) == 0 {
		return false
	}
	_, ok := slices.BinarySearch(x.chunks[x.chunkFor(name)].names, name)
	return ok
}

// add inserts name unless it is in the index already.
func (x *nameIndex) add(name string) {
	if !x.has(name) {
		x.insert(name)
	}
}

// remove deletes name, if present.
func (x *nameIndex) remove(name string) {
	if len(x.chunks) == 0 {
		return
	}
	i := x.chunkFor(name)
	if _, ok := slices.BinarySearch(x.chunks[i].names, name); !ok {
		return
	}
	x.prepare()
	c := x.own(i)
	j, _ := slices.BinarySearch(c.names, name)
	c.names = slices.Delete(c.names, j, j+1)
	x.n--
	x.bytes -= len(name)
	switch {
	case len(c.names) == 0:
		x.chunks = slices.Delete(x.chunks, i, i+1)
	case len(c.names) < nameChunkMin && i+1 < len(x.chunks) && len(c.names)+len(x.chunks[i+1].names) <= nameChunkMax:
		c.names = append(c.names, x.chunks[i+1].names...)
		x.chunks = slices.Delete(x.chunks, i+1, i+2)
	}
}

// clone returns an independent copy (for Tree.Clone): the names are shared,
// the chunks are not.
func (x *nameIndex) clone() *nameIndex {
	cp := &nameIndex{chunks: make([]*nameChunk, len(x.chunks)), n: x.n, bytes: x.bytes}
	for i, c := range x.chunks {
		cp.chunks[i] = newChunk(c.names, 0)
	}
	return cp
}

// ChildNames is a node's child names in sorted order as they stood when
// they were read. It is immutable, so it may be used after the tree's lock
// is released: a reply listing a large directory is encoded outside it.
type ChildNames struct {
	list   []string     // a small set's names (a sorted copy)
	chunks []*nameChunk // an indexed set's names
	n      int
	bytes  int
}

// Len is the number of names.
func (c ChildNames) Len() int { return c.n }

// Bytes is the total length of the names.
func (c ChildNames) Bytes() int { return c.bytes }

// Each calls f with every name, in order.
func (c ChildNames) Each(f func(name string)) {
	for _, s := range c.list {
		f(s)
	}
	for _, ch := range c.chunks {
		for _, s := range ch.names {
			f(s)
		}
	}
}

// AppendTo appends the names to dst, in order, and returns it.
func (c ChildNames) AppendTo(dst []string) []string {
	dst = slices.Grow(dst, c.n)
	dst = append(dst, c.list...)
	for _, ch := range c.chunks {
		dst = append(dst, ch.names...)
	}
	return dst
}

// checkIndex reports what is wrong with a set's name index, given the set's
// names in order: it must hold exactly them, in chunks of 1 to
// nameChunkMax, and exist whenever the set has more than nameIndexMin
// children and never at nameIndexMin/2 or fewer.
func (c *childSet) checkIndex(sorted []string) error {
	x := c.index()
	switch {
	case x == nil && len(sorted) > nameIndexMin:
		return fmt.Errorf("%d children without a name index", len(sorted))
	case x == nil:
		return nil
	case len(sorted) <= nameIndexMin/2:
		return fmt.Errorf("a name index kept for %d children", len(sorted))
	}
	return x.check(sorted)
}

// check reports how the index differs from sorted, the names it must hold.
func (x *nameIndex) check(sorted []string) error {
	bytes := 0
	for _, s := range sorted {
		bytes += len(s)
	}
	if x.n != len(sorted) || x.bytes != bytes {
		return fmt.Errorf("name index counts %d names of %d bytes; the set has %d of %d", x.n, x.bytes, len(sorted), bytes)
	}
	at := 0
	for i, ch := range x.chunks {
		if len(ch.names) == 0 || len(ch.names) > nameChunkMax {
			return fmt.Errorf("name index chunk %d holds %d names", i, len(ch.names))
		}
		for _, s := range ch.names {
			if at >= len(sorted) || s != sorted[at] {
				return fmt.Errorf("name index differs from the set at name %d (%q)", at, s)
			}
			at++
		}
	}
	if at != len(sorted) {
		return fmt.Errorf("name index holds %d of %d names", at, len(sorted))
	}
	return nil
}
