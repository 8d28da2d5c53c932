package metrics

import (
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
	var m dto.Metric
	if err := r.updates.Write(&m); err != nil || m.GetSummary().GetSampleCount() != 1 || m.GetSummary().GetSampleSum() != 2 {
		t.Fatalf("updatelatency %v (%v)", m.GetSummary(), err)
	}
	if err := r.read.Write(&m); err != nil || m.GetSummary().GetSampleCount() != 3 {
		t.Fatalf("readlatency %v (%v)", m.GetSummary(), err)
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
