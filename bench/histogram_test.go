package bench

import (
	"math/rand/v2"
	"sort"
	"testing"
)

func TestBucketBoundsContainValue(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(v int64) {
		i := bucketOf(v)
		if i < 0 || i >= histBuckets {
			t.Fatalf("bucketOf(%d) = %d out of range", v, i)
		}
		lo, hi := bucketBounds(i)
		cv := min(v, int64(histMax))
		if cv < lo || cv > hi {
			t.Fatalf("value %d in bucket %d [%d,%d]", v, i, lo, hi)
		}
		if w := hi - lo + 1; lo >= histSub && float64(w)/float64(lo) > 1.0/64+1e-9 {
			t.Fatalf("bucket %d [%d,%d] wider than 1/64 of its value", i, lo, hi)
		}
	}
	for v := int64(0); v < 5000; v++ {
		check(v)
	}
	for range 100000 {
		check(rng.Int64N(histMax))
	}
	check(histMax)
	check(histMax * 4)
	// Buckets tile the range without gaps.
	for i := 1; i < histBuckets; i++ {
		_, prevHi := bucketBounds(i - 1)
		lo, _ := bucketBounds(i)
		if lo != prevHi+1 {
			t.Fatalf("gap between bucket %d (hi %d) and %d (lo %d)", i-1, prevHi, i, lo)
		}
	}
}

func TestQuantilesMatchExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var h Histogram
	vals := make([]int64, 200000)
	for i := range vals {
		// log-normal-ish latencies from 10µs to ~1s
		v := int64(10_000 * (1 + rng.ExpFloat64()*rng.ExpFloat64()*50))
		vals[i] = v
		h.Record(v)
	}
	sort.Slice(vals, func(i, j int) bool { return vals[i] < vals[j] })
	var s HistSnapshot
	h.Snapshot(&s)
	if s.Total != uint64(len(vals)) || s.Max != vals[len(vals)-1] {
		t.Fatalf("total %d max %d, want %d %d", s.Total, s.Max, len(vals), vals[len(vals)-1])
	}
	prev := int64(0)
	for _, q := range []float64{0, 0.1, 0.5, 0.9, 0.99, 0.999, 0.9999, 1} {
		got := s.Quantile(q)
		idx := int(q*float64(len(vals))+0.999999) - 1
		idx = max(0, min(idx, len(vals)-1))
		want := vals[idx]
		if got < want || float64(got-want) > float64(want)/64+1 {
			t.Errorf("q%.4f = %d, exact %d", q, got, want)
		}
		if got < prev {
			t.Errorf("quantiles not monotone at %v: %d < %d", q, got, prev)
		}
		prev = got
	}
}

func TestSnapshotSubAndMerge(t *testing.T) {
	var h Histogram
	for v := range int64(1000) {
		h.Record(v * 1000)
	}
	var a HistSnapshot
	h.Snapshot(&a)
	for v := range int64(500) {
		h.Record(5_000_000 + v)
	}
	var b HistSnapshot
	h.Snapshot(&b)
	d := b.Sub(&a)
	if d.Total != 500 {
		t.Fatalf("diff total %d, want 500", d.Total)
	}
	if q := d.Quantile(0.01); q < 5_000_000 {
		t.Fatalf("diff p1 %d: old values leaked into the difference", q)
	}
	var m HistSnapshot
	m.Merge(&a)
	m.Merge(d)
	if m.Total != b.Total || m.Quantile(0.5) != b.Quantile(0.5) {
		t.Fatalf("merge(a, b-a) != b: %d/%d", m.Total, b.Total)
	}
	var empty HistSnapshot
	if empty.Quantile(0.99) != 0 || empty.Mean() != 0 {
		t.Fatal("empty snapshot must report zeros")
	}
}

func BenchmarkHistogramRecord(b *testing.B) {
	var h Histogram
	for i := range b.N {
		h.Record(int64(i&0xffff) * 1000)
	}
}
