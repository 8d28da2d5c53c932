package bench

import (
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// TestSummarizeReportsTheSpectrum: a row made from a histogram carries
// the quantiles a percentile plot needs, rising to the maximum.
func TestSummarizeReportsTheSpectrum(t *testing.T) {
	var h Histogram
	for i := int64(1); i <= 1000; i++ {
		h.Record(i * int64(time.Microsecond))
	}
	h.RecordN(int64(50*time.Millisecond), 10)
	var s HistSnapshot
	h.Snapshot(&s)
	row := Summarize("setData", &s, 2*time.Second)
	if row.Ops != 1010 || row.OpsPerSec != 505 {
		t.Fatalf("ops %d, %v/s", row.Ops, row.OpsPerSec)
	}
	if len(row.Quantiles) != len(spectrum) {
		t.Fatalf("%d quantiles, want %d", len(row.Quantiles), len(spectrum))
	}
	last := row.Quantiles[len(row.Quantiles)-1]
	if last.Q != 1 || last.Ms != 50 {
		t.Fatalf("the last quantile %+v, want the maximum, 50 ms", last)
	}
	for i := 1; i < len(row.Quantiles); i++ {
		if row.Quantiles[i].Ms < row.Quantiles[i-1].Ms {
			t.Fatalf("quantiles fall: %+v", row.Quantiles)
		}
	}
	if row.P50Ms < 0.49 || row.P50Ms > 0.52 || row.P99Ms > 1.02 || row.P999Ms != 50 {
		t.Fatalf("p50 %v ms, p99 %v ms, p99.9 %v ms", row.P50Ms, row.P99Ms, row.P999Ms)
	}
}

// TestTimelineRecordsLatencyPerSecond: each class's row gets the median
// and p99 of every whole second, so a slow second shows in its own place.
func TestTimelineRecordsLatencyPerSecond(t *testing.T) {
	r := &run{cfg: &Config{}, win: newWindow()}
	rec := r.newRecorder()
	r.win.start.Store(nowNanos())
	tl := startTimeline(r, false)
	busy := func(d, latency time.Duration) {
		for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(2 * time.Millisecond) {
			now := nowNanos()
			rec.done(classSet, now, now+int64(latency), jute.OK)
		}
	}
	// Seconds are counted at the timeline's ticks, so they may start up to
	// a tick late: each phase spans at least one whole second.
	busy(1300*time.Millisecond, time.Millisecond)
	busy(2300*time.Millisecond, 40*time.Millisecond)
	r.win.end.Store(nowNanos())
	res := r.result(3 * time.Second)
	tl.finish(res)
	if len(res.Ops) != 1 {
		t.Fatalf("rows %+v", res.Ops)
	}
	secs := res.Ops[0].PerSecond
	if len(secs) != len(res.PerSecond) || len(secs) < 2 {
		t.Fatalf("%d seconds of latency, %d of throughput", len(secs), len(res.PerSecond))
	}
	if first, last := secs[0], secs[len(secs)-1]; first.P99Ms > 1.1 || last.P50Ms < 39 {
		t.Fatalf("per-second latency %+v: want a fast second, then slow ones", secs)
	}
}
