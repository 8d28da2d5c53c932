package metrics

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// windowBounds are latencyWindow's bucket upper bounds in milliseconds; a
// quantile is interpolated within its bucket.
var windowBounds = [...]float64{0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 7.5, 10, 15, 20, 30, 50, 75, 100, 150, 200, 300,
	500, 750, 1000, 2000, 5000, 10000}

// windowQuantiles are the quantiles of ZooKeeper's request latency
// summaries (readlatency, updatelatency).
var windowQuantiles = [...]float64{0.5, 0.9, 0.99}

// windowLength is how often the quantiles' window moves on: they cover
// the requests of the last one to two windows.
const windowLength = time.Minute

// latencyWindow is a summary in milliseconds, ZooKeeper's readlatency or
// updatelatency, that costs the request path two atomic adds and a short
// search: requests are counted in fixed buckets, and the 0.5, 0.9 and
// 0.99 quantiles are interpolated from them at scrape time over the
// requests of the last one to two minutes (client_golang's summary keeps
// a quantile stream that cost nine times as much per request). Count and
// sum cover everything since the start.
type latencyWindow struct {
	desc    *prometheus.Desc
	buckets [len(windowBounds) + 1]atomic.Uint64 // the last one is +Inf
	sumNs   atomic.Uint64

	mu      sync.Mutex // guards what follows (scrapes)
	since   time.Time  // when base was taken
	base    [len(windowBounds) + 1]uint64
	earlier [len(windowBounds) + 1]uint64 // the base before base
}

func newLatencyWindow(name, help string) *latencyWindow {
	return &latencyWindow{desc: prometheus.NewDesc(name, help, nil, nil), since: time.Now()}
}

// observe counts one request that took d.
func (w *latencyWindow) observe(d time.Duration) {
	ms := float64(d) / float64(time.Millisecond)
	lo, hi := 0, len(windowBounds) // the first bound >= ms, or +Inf
	for lo < hi {
		mid := (lo + hi) / 2
		if windowBounds[mid] >= ms {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	w.buckets[lo].Add(1)
	w.sumNs.Add(uint64(max(d, 0)))
}

// Describe implements prometheus.Collector.
func (w *latencyWindow) Describe(ch chan<- *prometheus.Desc) { ch <- w.desc }

// Collect implements prometheus.Collector.
func (w *latencyWindow) Collect(ch chan<- prometheus.Metric) {
	var now [len(windowBounds) + 1]uint64
	var count uint64
	for i := range w.buckets {
		now[i] = w.buckets[i].Load()
		count += now[i]
	}
	sum := float64(w.sumNs.Load()) / float64(time.Millisecond)
	w.mu.Lock()
	if time.Since(w.since) >= windowLength {
		w.earlier, w.base, w.since = w.base, now, time.Now()
	}
	var recent [len(windowBounds) + 1]uint64
	for i := range now {
		recent[i] = now[i] - w.earlier[i]
	}
	w.mu.Unlock()
	q := make(map[float64]float64, len(windowQuantiles))
	for _, p := range windowQuantiles {
		q[p] = bucketQuantile(p, recent[:])
	}
	ch <- prometheus.MustNewConstSummary(w.desc, count, sum, q)
}

// bucketQuantile interpolates quantile p from counts per windowBounds
// bucket (the last unbounded, reported as the largest bound); NaN
// without any count, as an empty summary reports.
func bucketQuantile(p float64, counts []uint64) float64 {
	var total uint64
	for _, c := range counts {
		total += c
	}
	if total == 0 {
		return math.NaN()
	}
	rank := p * float64(total)
	var cum float64
	for i, c := range counts {
		if c == 0 {
			continue
		}
		if cum+float64(c) >= rank {
			if i == len(windowBounds) {
				return windowBounds[len(windowBounds)-1]
			}
			lower := 0.0
			if i > 0 {
				lower = windowBounds[i-1]
			}
			return lower + (windowBounds[i]-lower)*(rank-cum)/float64(c)
		}
		cum += float64(c)
	}
	return windowBounds[len(windowBounds)-1]
}
