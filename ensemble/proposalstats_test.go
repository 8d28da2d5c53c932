package ensemble

import "testing"

// TestProposalStats: last/min/max as ZooKeeper's BufferStats, -1 before the
// first and after a reset.
func TestProposalStats(t *testing.T) {
	p := newProposalStats()
	check := func(last, min, max int64) {
		t.Helper()
		if l, lo, hi := p.values(); l != last || lo != min || hi != max {
			t.Fatalf("got %d/%d/%d, want %d/%d/%d", l, lo, hi, last, min, max)
		}
	}
	check(-1, -1, -1)
	p.record(40)
	check(40, 40, 40)
	p.record(90)
	p.record(12)
	p.record(50)
	check(50, 12, 90)
	p.reset()
	check(-1, -1, -1)
}
