package session

import (
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/rawclient"
	"github.com/zkraft/zkraft/internal/testing/testmember"
)

// TestFirstSessionIDAsZooKeeper: a member's first session id is ZooKeeper's
// initializeNextSessionId: the id shifted into the top byte (an id that
// does not fit keeps its low byte, as Java's shift), the start time's low
// 40 bits of milliseconds below, never the container marker.
func TestFirstSessionIDAsZooKeeper(t *testing.T) {
	at := time.UnixMilli(0x0123456789)
	low := int64(0x0123456789) << 16
	for _, c := range []struct {
		id   int64
		want uint64
	}{
		{0, 0}, {1, 0x01 << 56}, {255, 0xff << 56}, {44, 44 << 56}, {300, 44 << 56}, {-5, 0xfb << 56},
	} {
		if got := firstSessionID(c.id, at); got != int64(c.want)|low {
			t.Errorf("server %d: %#x, want %#x", c.id, uint64(got), c.want|uint64(low))
		}
	}
	if got := firstSessionID(128, time.UnixMilli(0)); got == containerOwner {
		t.Errorf("server 128 at 0: the container marker %#x", uint64(got))
	}
}

// TestSessionsUniqueAcrossIDsEqualModulo256: members 1 and 257 mint under
// the same top byte; started from the same counter (the worst case: the
// same millisecond), they create sessions in turn, and every one is
// created, on the first try or after the log refused a live id, with no id
// held twice.
func TestSessionsUniqueAcrossIDsEqualModulo256(t *testing.T) {
	nodes := testmember.EnsembleOf(t, 1, 257, 300)
	if nodes == nil {
		return
	}
	// The sessions must outlive the test without pings: on a busy machine
	// creating 40 can take longer than a few ticks.
	a := New(Config{ServerID: 1, TickTime: 200 * time.Millisecond, MaxSessionTimeout: time.Minute}, nodes[0])
	b := New(Config{ServerID: 257, TickTime: 200 * time.Millisecond, MaxSessionTimeout: time.Minute}, nodes[1])
	start := a.nextSession.Load()
	b.nextSession.Store(start)
	addrs := []string{testmember.Serve(t, a), testmember.Serve(t, b)}
	seen := map[int64]int{}
	const each = 20
	for i := 0; i < each; i++ {
		for m, addr := range addrs {
			c := rawclient.Dial(t, addr)
			resp := c.ConnectFor(60000)
			if resp.SessionID == 0 {
				t.Fatalf("session %d on member %d not created", i, m)
			}
			if prev, dup := seen[resp.SessionID]; dup {
				t.Fatalf("session %#x given by member %d and member %d", resp.SessionID, prev, m)
			}
			seen[resp.SessionID] = m
		}
	}
	// Member 257's first candidate was member 1's first session: the log
	// refused it and 257 skipped ahead.
	if skipped := b.nextSession.Load() - start; skipped <= each {
		t.Errorf("member 257 moved its counter by %d for %d sessions: no collision was met", skipped, each)
	}
	// Every session is in the replicated state, on the third member too.
	deadline := time.Now().Add(10 * time.Second)
	for {
		held := 0
		tr := nodes[2].RLockTree()
		for id := range seen {
			if _, ok := tr.Session(id); ok {
				held++
			}
		}
		nodes[2].RUnlockTree()
		if held == 2*each {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("member 300 holds %d of the %d sessions", held, 2*each)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
