package main

import (
	"math"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/benchcluster"
)

func TestMedianTakesEachMeasureSeparately(t *testing.T) {
	runs := []result{
		{opsPerSec: 100, p99: 9, cpuPerOp: 30 * time.Microsecond, errors: 1},
		{opsPerSec: 300, p99: 1, cpuPerOp: 10 * time.Microsecond},
		{opsPerSec: 200, p99: 5, cpuPerOp: 20 * time.Microsecond, errors: 2},
	}
	m := median(runs)
	if m.opsPerSec != 200 || m.p99 != 5 || m.cpuPerOp != 20*time.Microsecond || m.errors != 3 {
		t.Fatalf("median of three: %+v", m)
	}
	m = median(runs[:2])
	if m.opsPerSec != 200 || m.p99 != 5 || m.cpuPerOp != 20*time.Microsecond {
		t.Fatalf("median of two: %+v", m)
	}
	runs[0].steal = 0.124
	runs[0].clientPerOp = 7 * time.Microsecond
	if got := describe(runs[:1]); got != "100 / 9 / 30 / 7 / 12%" {
		t.Fatalf("describe: %q", got)
	}
}

// TestMedianOfFailovers: the failover row is the median of the kills, so
// one unlucky election (a split vote, a stall of the VM) does not decide it.
func TestMedianOfFailovers(t *testing.T) {
	kills := []float64{1.59, 0.44, 0.48}
	if got := medianOf(kills); got != 0.48 {
		t.Fatalf("median of %v = %v, want 0.48", kills, got)
	}
	if kills[0] != 1.59 {
		t.Fatal("medianOf reordered its argument")
	}
	if got := medianOf([]float64{1, 2}); got != 1.5 {
		t.Fatalf("median of two = %v", got)
	}
	if got := medianOf(nil); got != 0 {
		t.Fatalf("median of none = %v", got)
	}
}

// TestTableRowOfAFailoverThatNeverWrote: a reference whose election
// outlasted the wait is "never", with no ratio; otherwise zkraft's figure
// over the reference's.
func TestTableRowOfAFailoverThatNeverWrote(t *testing.T) {
	if got, want := tableRow("leader kill -9 → next acknowledged write", math.Inf(1), 0.5, "s", false),
		"| leader kill -9 → next acknowledged write | never (none within 1m0s) | 0.5 s | – |"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got, want := tableRow("leader kill -9 → next acknowledged write", medianOf([]float64{2, math.Inf(1), 1}), 0.5, "s", false),
		"| leader kill -9 → next acknowledged write | 2 s | 0.5 s | **0.25x** (lower is better) |"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got, want := tableRow("write throughput", 100, 250, "ops/s", true), "| write throughput | 100 ops/s | 250 ops/s | **2.50x** (higher is better) |"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestTurnAlternatesWhoGoesFirst: repetitions alternate the order of the
// two ensembles, for the workloads and the failover kills alike.
func TestTurnAlternatesWhoGoesFirst(t *testing.T) {
	a, b := &benchcluster.Ensemble{Name: "a"}, &benchcluster.Ensemble{Name: "b"}
	both := []*benchcluster.Ensemble{a, b}
	for rep, first := range []*benchcluster.Ensemble{a, b, a, b} {
		if got := turn(both, rep); got[0] != first || len(got) != 2 {
			t.Fatalf("rep %d: %s first", rep, got[0].Name)
		}
	}
}
