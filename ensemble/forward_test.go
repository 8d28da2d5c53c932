package ensemble

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestProposalWaitingForLeaderWhenElected: proposals made on the followers
// right after the leader dies wait for a new leader; the member that wins
// the election must apply its own waiting proposal instead of waiting on
// for a leader to forward to (which used to fail it with "no leader" after
// four election timeouts).
func TestProposalWaitingForLeaderWhenElected(t *testing.T) {
	c := newCluster(t, 3, nil)
	old := c.leader()
	mustPropose(t, old, newSession(1, 30000))
	c.stop(old.ID())

	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for _, n := range c.nodes {
		wg.Add(1)
		go func(n *Node) {
			defer wg.Done()
			path := fmt.Sprintf("/after-%d", n.ID())
			res, err := n.ProposeWait(createTxn(1, path, 0, time.Now().UnixMilli()))
			if errors.Is(err, errForwardBroken) {
				// Sent to the dead leader before this member saw its
				// connection close: unknown outcome, as a client gets
				// ConnectionLoss. A client retries, as here, still
				// before there is a new leader.
				res, err = n.ProposeWait(createTxn(1, path, 0, time.Now().UnixMilli()))
			}
			if err != nil {
				errs <- fmt.Errorf("member %d: %w", n.ID(), err)
			} else if res.Err != 0 {
				errs <- fmt.Errorf("member %d: %v", n.ID(), res.Err)
			}
		}(n)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		for _, n := range c.nodes {
			_, e1 := treeStat(n, "/after-1")
			_, e2 := treeStat(n, "/after-2")
			_, e3 := treeStat(n, "/after-3")
			t.Logf("member %d leader=%v zxid=%d applied=%d last=%d: %v %v %v", n.ID(), n.IsLeader(), n.LastZxid(), n.raft.AppliedIndex(), n.raft.LastIndex(), e1, e2, e3)
		}
		t.Fatal("a proposal is still waiting")
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
