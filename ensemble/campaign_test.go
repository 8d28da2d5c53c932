package ensemble

import (
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// slowWriter delays every write on a connection while slow is set.
type slowWriter struct {
	net.Conn
	slow *atomic.Bool
}

func (c slowWriter) Write(b []byte) (int, error) {
	if c.slow.Load() {
		time.Sleep(300 * time.Millisecond)
	}
	return c.Conn.Write(b)
}

// TestFirstElectionLoserFollows: members started together (as a live
// migration's cutover starts its observers as an ensemble) elect while
// the first voter's messages are slow, so the second voter wins the term
// the first one campaigned in. The first must follow the winner at once.
// A candidacy begun by Raft's TimeoutNow (a leadership transfer's) does
// not yield to a leader of its own term: the member stayed a candidate
// that knew the leader for up to 2P, in which it ignored the leader's
// death and refused the other survivor's pre-vote, and the ensemble went
// without a leader for seconds after a kill -9 (seen on a loaded machine
// in e2e/migration's cutover test: 9 s).
func TestFirstElectionLoserFollows(t *testing.T) {
	var slow atomic.Bool
	slow.Store(true)
	c := newCluster(t, 3, func(cfg *Config) {
		if cfg.ID != 1 {
			return
		}
		dial := cfg.Dial
		cfg.Dial = func(addr string, timeout time.Duration) (net.Conn, error) {
			nc, err := dial(addr, timeout)
			if err != nil {
				return nil, err
			}
			return slowWriter{Conn: nc, slow: &slow}, nil
		}
	})
	l := c.leader()
	slow.Store(false)
	mustPropose(t, l, newSession(1, 60000))
	deadline := time.Now().Add(c.nodes[1].electionTimeout() / 2)
	for _, n := range c.nodes {
		if n == l {
			continue
		}
		for n.raft.State() != raft.Follower {
			if time.Now().After(deadline) {
				addr, _ := n.raft.LeaderWithID()
				t.Fatalf("member %d is a %v that knows leader %q, %v after member %d was elected",
					n.ID(), n.raft.State(), addr, time.Since(deadline.Add(-c.nodes[1].electionTimeout()/2)), l.ID())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	t.Logf("member %d leads; every other member follows", l.ID())
}
