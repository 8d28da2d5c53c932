package bench

import (
	"math"
	"math/bits"
	"sync/atomic"
)

// Histogram layout: values (nanoseconds) below histSub are counted exactly;
// above, each power of two is split into histSub/2 equal buckets, so a bucket
// is at most 1/64 of its value wide (relative error under 1.6%). Values above
// histMax are clamped into the last bucket.
const (
	histSubBits = 7
	histSub     = 1 << histSubBits // 128
	histHalf    = histSub / 2
	histMaxBits = 37 // 2^37 ns ≈ 137 s
	histMax     = 1<<histMaxBits - 1
	histBuckets = (histMaxBits-histSubBits)*histHalf + histSub
)

// Histogram is a log-linear latency histogram. Record is safe to call from
// several goroutines at once and never allocates; Snapshot may run
// concurrently with Record (it sees each bucket atomically, not the whole
// histogram at one instant, which is good enough for live progress).
type Histogram struct {
	counts [histBuckets]atomic.Uint64
	max    atomic.Int64
}

// bucketOf returns the bucket index of v (v >= 0).
func bucketOf(v int64) int {
	if v < histSub {
		if v < 0 {
			return 0
		}
		return int(v)
	}
	if v > histMax {
		v = histMax
	}
	u := uint64(v)
	e := bits.Len64(u) - histSubBits // >= 1
	return e*histHalf + int(u>>uint(e))
}

// bucketBounds returns the smallest and largest value counted in bucket i.
func bucketBounds(i int) (lo, hi int64) {
	if i < histSub {
		return int64(i), int64(i)
	}
	e := i/histHalf - 1
	m := int64(i - e*histHalf)
	return m << uint(e), (m+1)<<uint(e) - 1
}

// Record counts one value in nanoseconds.
func (h *Histogram) Record(ns int64) { h.RecordN(ns, 1) }

// RecordN counts n values of ns nanoseconds: a histogram recorded
// elsewhere in the same layout (the Java client's, which sends one value
// per bucket) is merged by recording each bucket's value n times.
func (h *Histogram) RecordN(ns int64, n uint64) {
	if n == 0 {
		return
	}
	h.counts[bucketOf(ns)].Add(n)
	for {
		m := h.max.Load()
		if ns <= m || h.max.CompareAndSwap(m, ns) {
			return
		}
	}
}

// Snapshot adds h's counts into s.
func (h *Histogram) Snapshot(s *HistSnapshot) {
	for i := range h.counts {
		if n := h.counts[i].Load(); n != 0 {
			s.Counts[i] += n
			s.Total += n
		}
	}
	if m := h.max.Load(); m > s.Max {
		s.Max = m
	}
}

// HistSnapshot is a plain (non-atomic) copy of one or more histograms,
// used for merging, differencing and percentiles.
type HistSnapshot struct {
	Counts [histBuckets]uint64
	Total  uint64
	Max    int64
}

// Merge adds o into s.
func (s *HistSnapshot) Merge(o *HistSnapshot) {
	for i, n := range o.Counts {
		s.Counts[i] += n
	}
	s.Total += o.Total
	if o.Max > s.Max {
		s.Max = o.Max
	}
}

// Sub returns s - prev bucket by bucket (the values recorded between two
// snapshots of the same histograms). Max is s's max.
func (s *HistSnapshot) Sub(prev *HistSnapshot) *HistSnapshot {
	d := &HistSnapshot{Max: s.Max}
	for i, n := range s.Counts {
		if p := prev.Counts[i]; n > p {
			d.Counts[i] = n - p
			d.Total += n - p
		}
	}
	return d
}

// Quantile returns the value at quantile q (0..1) in nanoseconds: the upper
// bound of the bucket holding the ceil(q*Total)-th value, capped at Max.
// It is 0 for an empty snapshot and monotone in q.
func (s *HistSnapshot) Quantile(q float64) int64 {
	if s.Total == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(s.Total)))
	if rank < 1 {
		rank = 1
	}
	var seen uint64
	for i, n := range s.Counts {
		seen += n
		if seen >= rank {
			_, hi := bucketBounds(i)
			if s.Max > 0 && hi > s.Max {
				hi = s.Max
			}
			return hi
		}
	}
	return s.Max
}

// Mean returns the average in nanoseconds using bucket midpoints.
func (s *HistSnapshot) Mean() float64 {
	if s.Total == 0 {
		return 0
	}
	var sum float64
	for i, n := range s.Counts {
		if n != 0 {
			lo, hi := bucketBounds(i)
			sum += float64(n) * (float64(lo) + float64(hi)) / 2
		}
	}
	return sum / float64(s.Total)
}
