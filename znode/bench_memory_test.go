package znode

import (
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// benchShape is a tree for the memory and lookup benchmarks: parents
// directories (or, with one parent, the directory itself) under
// /zkraft-bench/tree, perParent leaves of 100 bytes under each, named like
// the ones `zkraft bench --workload populate` creates.
type benchShape struct {
	name      string
	parents   int
	perParent int
}

var benchShapes = []benchShape{
	{"flat", 1, 1_000_000},
	{"nested", 1000, 1000},
}

// dirs returns the shape's parent directories.
func (s benchShape) dirs() []string {
	if s.parents == 1 {
		return []string{"/zkraft-bench/tree"}
	}
	out := make([]string, s.parents)
	for i := range out {
		out[i] = fmt.Sprintf("/zkraft-bench/tree/d%05d", i)
	}
	return out
}

// leaf returns the path of leaf j (0 <= j < parents*perParent).
func (s benchShape) leaf(dirs []string, j int) string {
	return fmt.Sprintf("%s/n%07d", dirs[j/s.perParent], j)
}

// build creates the shape through Apply, one create transaction at a time.
func (s benchShape) build(tb testing.TB) *Tree {
	tr := NewTree(Options{})
	zxid := int64(1)
	apply := func(txn *Txn) {
		zxid++
		if r := tr.Apply(txn, zxid); r.Err != jute.OK {
			tb.Fatalf("apply %v: %v", txn.Type, r.Err)
		}
	}
	apply(&Txn{Type: jute.OpCreateSession, Session: 1, Timeout: 30000, Passwd: make([]byte, 16)})
	create := func(path string, data []byte) {
		apply(&Txn{Type: jute.OpCreate, Session: 1, Ids: ipIDs, Time: 1_700_000_000_000 + zxid,
			Req: jute.Marshal(&jute.CreateRequest{Path: path, Data: data, ACL: openACL})})
	}
	create("/zkraft-bench", nil)
	create("/zkraft-bench/tree", nil)
	dirs := s.dirs()
	if s.parents > 1 {
		for _, d := range dirs {
			create(d, nil)
		}
	}
	value := make([]byte, 100)
	for j := 0; j < s.parents*s.perParent; j++ {
		create(s.leaf(dirs, j), value)
	}
	return tr
}

// liveHeap is the heap in use right after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkTreeMemory1M builds 1,000,000 znodes of 100 bytes through Apply
// (flat: all under one parent; nested: 1000 parents x 1000 children) and
// reports the live heap the tree holds, per znode and in total.
func BenchmarkTreeMemory1M(b *testing.B) {
	for _, s := range benchShapes {
		b.Run(s.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				before := liveHeap()
				tr := s.build(b)
				after := liveHeap()
				n := float64(tr.Stats().Nodes)
				b.ReportMetric(float64(after-before)/n, "heap-B/znode")
				b.ReportMetric(float64(after-before)/(1<<20), "heap-MiB")
				runtime.KeepAlive(tr)
			}
		})
	}
}

var (
	fixtureOnce  sync.Once
	fixtureTree  *Tree
	fixturePaths []string
)

// lookupFixture returns the nested 1M tree and its leaf paths in a fixed
// random order, built once for the lookup and clone benchmarks.
func lookupFixture(b *testing.B) (*Tree, []string) {
	fixtureOnce.Do(func() {
		s := benchShapes[1]
		fixtureTree = s.build(b)
		dirs := s.dirs()
		fixturePaths = make([]string, s.parents*s.perParent)
		for j := range fixturePaths {
			fixturePaths[j] = s.leaf(dirs, j)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		rng.Shuffle(len(fixturePaths), func(i, j int) {
			fixturePaths[i], fixturePaths[j] = fixturePaths[j], fixturePaths[i]
		})
	})
	if fixtureTree == nil {
		b.Fatal("fixture not built")
	}
	return fixtureTree, fixturePaths
}

// BenchmarkLookup1M reads the nested 1M tree: Exists and GetData of random
// leaves (cold: nearly every read misses the CPU caches), GetData of the
// 1000 leaves of one directory (hot), Exists of absent paths and
// GetChildren of a 1000-child directory.
func BenchmarkLookup1M(b *testing.B) {
	tr, paths := lookupFixture(b)
	s := benchShapes[1]
	hot := make([]string, s.perParent)
	for j := range hot {
		hot[j] = s.leaf(s.dirs(), s.perParent*s.parents/2+j)
	}
	missing := make([]string, 1<<16)
	for j := range missing {
		missing[j] = paths[j] + "x"
	}
	b.Run("Exists", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := tr.Exists(paths[i%len(paths)], nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("GetData", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, _, err := tr.GetData(paths[i%len(paths)], nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("GetDataHot", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, _, err := tr.GetData(hot[i%len(hot)], nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("GetChildren1000", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, _, err := tr.GetChildren(fmt.Sprintf("/zkraft-bench/tree/d%05d", i%1000), nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Missing", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := tr.Exists(missing[i%len(missing)], nil); err != jute.ErrNoNode {
				b.Fatal(err)
			}
		}
	})
}

// tree returns the 1M-znode tree of shape s: the shared fixture for the
// nested shape, a fresh one otherwise.
func (s benchShape) tree(b *testing.B) *Tree {
	if s.parents == benchShapes[1].parents {
		tr, _ := lookupFixture(b)
		return tr
	}
	return s.build(b)
}

// BenchmarkClone1M clones 1M-znode trees of both shapes (what a snapshot
// does under the lock; -cpu 1,2 compares the sequential and split clone).
func BenchmarkClone1M(b *testing.B) {
	for _, s := range benchShapes {
		b.Run(s.name, func(b *testing.B) {
			tr := s.tree(b)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				runtime.KeepAlive(tr.Clone())
			}
		})
	}
}

// BenchmarkChurnBigParent creates and deletes children of a parent that
// already holds 100,000: each op must stay O(1) in the parent's size.
func BenchmarkChurnBigParent(b *testing.B) {
	tr := NewTree(Options{})
	tr.Apply(&Txn{Type: jute.OpCreateSession, Session: 1}, 1)
	zxid := int64(1)
	apply := func(txn *Txn) {
		zxid++
		if r := tr.Apply(txn, zxid); r.Err != jute.OK {
			b.Fatalf("apply: %v", r.Err)
		}
	}
	apply(&Txn{Type: jute.OpCreate, Session: 1, Req: jute.Marshal(&jute.CreateRequest{Path: "/p", ACL: openACL})})
	for i := 0; i < 100_000; i++ {
		apply(&Txn{Type: jute.OpCreate, Session: 1, Req: jute.Marshal(&jute.CreateRequest{Path: fmt.Sprintf("/p/k%07d", i), ACL: openACL})})
	}
	creates := make([]*Txn, 1000)
	deletes := make([]*Txn, len(creates))
	for i := range creates {
		p := fmt.Sprintf("/p/c%04d", i)
		creates[i] = &Txn{Type: jute.OpCreate, Session: 1, Req: jute.Marshal(&jute.CreateRequest{Path: p, Data: make([]byte, 100), ACL: openACL})}
		deletes[i] = &Txn{Type: jute.OpDelete, Session: 1, Req: jute.Marshal(&jute.PathVersionRequest{Path: p, Version: -1})}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := i % len(creates)
		apply(creates[k])
		apply(deletes[k])
	}
}

// BenchmarkSnapshotView1M writes 1M-znode trees of both shapes through a
// SnapshotView and reports the longest hold of the lock (what a write
// waits for at most while a snapshot is written) next to the whole write.
func BenchmarkSnapshotView1M(b *testing.B) {
	for _, s := range benchShapes {
		b.Run(s.name, func(b *testing.B) {
			tr := s.tree(b)
			b.ResetTimer()
			var longest time.Duration
			for i := 0; i < b.N; i++ {
				v, err := tr.BeginSnapshot()
				if err != nil {
					b.Fatal(err)
				}
				var held time.Time
				err = v.WriteSnapshot(io.Discard, func() { held = time.Now() }, func() { longest = max(longest, time.Since(held)) })
				if err != nil {
					b.Fatal(err)
				}
				v.Close()
			}
			b.ReportMetric(float64(longest.Microseconds())/1000, "max-hold-ms")
		})
	}
}
