package ensemble

import (
	"testing"
	"time"
)

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

// TestProposalCountsOnTheLeader: the leader counts every entry it appends
// and every one committed (ZooKeeper's proposal_count and commit_count),
// those a follower forwards to it included; the follower counts none;
// ResetProposalSizes starts them over.
func TestProposalCountsOnTheLeader(t *testing.T) {
	c := newCluster(t, 3, nil)
	leader, follower := c.leader(), c.follower()
	leader.ResetProposalSizes()
	mustPropose(t, leader, newSession(0x101, 30000))
	mustPropose(t, follower, newSession(0x102, 30000))
	mustPropose(t, follower, createTxn(0x102, "/counted", 0, time.Now().UnixMilli()))
	// The leader may add entries of its own (session owners, nudges):
	// at least the three.
	deadline := time.Now().Add(5 * time.Second)
	for {
		proposed, committed := leader.ProposalCounts()
		if proposed >= 3 && committed >= 3 && committed <= proposed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("leader: proposed %d, committed %d, want at least 3 each", proposed, committed)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if p, cm := follower.ProposalCounts(); p != 0 || cm != 0 {
		t.Fatalf("follower: proposed %d, committed %d", p, cm)
	}
	if leader.UnrecoverableErrors() != 0 {
		t.Fatal("unrecoverable errors counted")
	}
	leader.ResetProposalSizes()
	if p, cm := leader.ProposalCounts(); p != 0 || cm != 0 {
		t.Fatalf("after reset: %d, %d", p, cm)
	}
}
