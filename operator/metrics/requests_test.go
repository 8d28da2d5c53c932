package metrics

import (
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/zkraft/zkraft/jute"
)

// TestObserveRequestDoesNotAllocate: the per-op observer is built in
// advance, so recording a request on the hot path allocates nothing.
func TestObserveRequestDoesNotAllocate(t *testing.T) {
	r := newRequests()
	for _, op := range []jute.Op{jute.OpGetData, jute.OpSetData, jute.OpCloseSession, jute.OpWhoAmI, 55} {
		write := op == jute.OpSetData
		if allocs := testing.AllocsPerRun(1000, func() { r.ObserveRequest(op, write, 3*time.Millisecond) }); allocs != 0 {
			t.Errorf("op %d: %v allocations per request", op, allocs)
		}
	}
}

// TestObserveRequestByOp: each request lands in its op's histogram (an
// unknown op in "other") and in readlatency or updatelatency.
func TestObserveRequestByOp(t *testing.T) {
	r := newRequests()
	r.ObserveRequest(jute.OpGetData, false, time.Millisecond)
	r.ObserveRequest(jute.OpGetData, false, time.Millisecond)
	r.ObserveRequest(jute.OpCreate2, true, 2*time.Millisecond)
	r.ObserveRequest(99, false, time.Millisecond)
	for op, want := range map[string]uint64{"getData": 2, "create2": 1, "other": 1, "setData": 0} {
		if got := histCount(t, r.hist.WithLabelValues(op)); got != want {
			t.Errorf("op %s: %d observations, want %d", op, got, want)
		}
	}
	if m := collectSummary(t, r.updates); m.GetSampleCount() != 1 || m.GetSampleSum() != 2 {
		t.Fatalf("updatelatency %v", m)
	}
	if m := collectSummary(t, r.read); m.GetSampleCount() != 3 {
		t.Fatalf("readlatency %v", m)
	}
}

func collectSummary(t *testing.T, c prometheus.Collector) *dto.Summary {
	t.Helper()
	ch := make(chan prometheus.Metric, 1)
	c.Collect(ch)
	var m dto.Metric
	if err := (<-ch).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetSummary()
}

// TestLatencyWindowQuantiles: readlatency's quantiles are interpolated
// from its buckets over the recent window, as ZooKeeper's summary gives
// them: 1000 requests of 1..1000 µs and 30 of 40 ms put the median near
// 0.5 ms, 0.9 near 0.9 ms and 0.99 in the slow ones' bucket.
func TestLatencyWindowQuantiles(t *testing.T) {
	w := newLatencyWindow("readlatency", "h")
	if m := collectSummary(t, w); m.GetSampleCount() != 0 || !math.IsNaN(m.Quantile[0].GetValue()) {
		t.Fatalf("empty: %v", m)
	}
	for i := 1; i <= 1000; i++ {
		w.observe(time.Duration(i) * time.Microsecond)
	}
	for range 30 {
		w.observe(40 * time.Millisecond)
	}
	m := collectSummary(t, w)
	if m.GetSampleCount() != 1030 || math.Abs(m.GetSampleSum()-(500.5+1200)) > 0.01 {
		t.Fatalf("count %d sum %v", m.GetSampleCount(), m.GetSampleSum())
	}
	want := map[float64][2]float64{0.5: {0.45, 0.55}, 0.9: {0.8, 1}, 0.99: {30, 50}}
	for _, q := range m.Quantile {
		r := want[q.GetQuantile()]
		if v := q.GetValue(); v < r[0] || v > r[1] {
			t.Errorf("quantile %v = %v, want %v..%v", q.GetQuantile(), v, r[0], r[1])
		}
	}
	// A window later the old requests still count; two windows later
	// only the new ones do.
	w.since = w.since.Add(-windowLength)
	collectSummary(t, w)
	w.since = w.since.Add(-windowLength)
	w.observe(7 * time.Millisecond)
	for _, q := range collectSummary(t, w).Quantile {
		if v := q.GetValue(); v < 5 || v > 7.5 {
			t.Errorf("after two windows: quantile %v = %v, want the one new request's bucket", q.GetQuantile(), v)
		}
	}
}

func histCount(t *testing.T, o prometheus.Observer) uint64 {
	t.Helper()
	var m dto.Metric
	if err := o.(prometheus.Metric).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount()
}

func BenchmarkObserveRequest(b *testing.B) {
	r := newRequests()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r.ObserveRequest(jute.OpGetData, i%4 == 0, time.Duration(i%1000)*time.Microsecond)
	}
}
