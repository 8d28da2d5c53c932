package ensemble

import (
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
	c := newCluster(t, 3, func(cfg *Config) { cfg.ElectionTimeout = election })
	lead := c.leader()
	f := c.follower()
	// f can no longer reach the leader (its forwarding connection breaks,
	// new dials are refused); the leader still reaches f, so f knows
	// who leads and keeps trying.
	c.net.mu.Lock()
	c.net.blocked[[2]int64{f.ID(), lead.ID()}] = true
	conns := append([]*faultConn(nil), c.net.conns...)
	c.net.mu.Unlock()
	for _, fc := range conns {
		if fc.from == f.ID() && fc.to == lead.ID() {
			fc.Conn.Close()
		}
	}
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
