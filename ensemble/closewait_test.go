package ensemble

import (
	"errors"
	"testing"
	"time"
)

// A follower that closes while its forwarder waits for a leader it cannot
// reach stops at once: Close does not sit out the forwarder's wait of two
// election timeouts. The forwarder was in that wait for a session touch
// (flushTouches, one of the goroutines Close waits for) when, in CI, a
// member that had just handed leadership off under a writer did not exit
// within 20 s of SIGTERM: its dials to the new leader failed once Close
// had begun (dialedConns), and the wait ran to its end.
func TestCloseDoesNotWaitForTheForwardersLeader(t *testing.T) {
	const election = 10 * time.Second
	c, f := clusterWithLeaderOutOfReach(t, election)
	f.TouchSession(42)
	time.Sleep(10 * f.halfTick()) // flushTouches is in the forwarder's wait now
	if addr, _ := f.raft.LeaderWithID(); addr == "" {
		t.Fatal("the follower lost its leader: the test does not test the wait")
	}
	start := time.Now()
	c.stop(f.ID())
	if took := time.Since(start); took > election/2 {
		t.Fatalf("Close took %v: it waited for the forwarder to give up on the leader", took)
	}
}

// A write waiting on a follower for a leader to forward it to fails at
// once when the member begins to close (BeginClose, which the server
// calls before it closes its client connections and waits for their
// readers, one of which made this call), not after the forwarder's two
// election timeouts.
func TestBeginCloseEndsTheWaitForALeader(t *testing.T) {
	const election = 10 * time.Second
	_, f := clusterWithLeaderOutOfReach(t, election)
	w := &syncWaiter{done: make(chan struct{})}
	go f.Propose(newSession(7, 30000), w)
	select {
	case <-w.done:
		t.Fatalf("the write ended (%v) with its leader out of reach: the test does not test the wait", w.err)
	case <-time.After(300 * time.Millisecond):
	}
	f.BeginClose()
	select {
	case <-w.done:
		if !errors.Is(w.err, ErrClosed) {
			t.Fatalf("the waiting write failed with %v, want ErrClosed", w.err)
		}
	case <-time.After(election / 2):
		t.Fatal("BeginClose did not end the wait for a leader")
	}
}

// clusterWithLeaderOutOfReach starts three members with the election
// timeout given and returns a follower that can no longer reach the
// leader (its forwarding connection broken, new dials refused), while the
// leader still reaches it: it knows who leads, and keeps trying.
func clusterWithLeaderOutOfReach(t *testing.T, election time.Duration) (*cluster, *Node) {
	t.Helper()
	c := newCluster(t, 3, func(cfg *Config) { cfg.ElectionTimeout = election })
	lead := c.leader()
	f := c.follower()
	c.net.cut(f.ID(), lead.ID())
	return c, f
}
