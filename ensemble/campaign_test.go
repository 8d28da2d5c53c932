package ensemble

import (
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

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
	net := newFaultNet()
	net.slow(1, 2, 300*time.Millisecond)
	net.slow(1, 3, 300*time.Millisecond)
	c := newClusterOn(t, net, []int64{1, 2, 3}, 3, nil)
	l := c.leader()
	net.heal()
	mustPropose(t, l, newSession(1, 60000))
	wait := c.nodes[1].electionTimeout() / 2
	deadline := time.Now().Add(wait)
	for _, n := range c.nodes {
		if n == l {
			continue
		}
		for n.raft.State() != raft.Follower {
			if time.Now().After(deadline) {
				addr, _ := n.raft.LeaderWithID()
				t.Fatalf("member %d is a %v that knows leader %q, %v after member %d was elected",
					n.ID(), n.raft.State(), addr, wait, l.ID())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	t.Logf("member %d leads; every other member follows", l.ID())
}
