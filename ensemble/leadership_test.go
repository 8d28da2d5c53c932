package ensemble

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/zkraft/zkraft/znode"
)

// TestLeaderChangeEndsForwardedWaits checks that a change of leader fails
// what a follower has in flight to the old leader, on both ends: the
// follower breaks its forwarding connection, and the old leader closes the
// connections it served. An old leader may never answer (a future Raft
// left unresolved, a partition), and a client's write then waited forever.
func TestLeaderChangeEndsForwardedWaits(t *testing.T) {
	c := newCluster(t, 3, nil)
	l, f := c.leader(), c.follower()
	mustPropose(t, f, newSession(1, 30000)) // opens f's forwarding connection

	// A request the leader will never answer, in flight on that connection.
	failed := make(chan error, 1)
	f.fwd.mu.Lock()
	if f.fwd.conn == nil {
		f.fwd.mu.Unlock()
		t.Fatal("no forwarding connection")
	}
	f.fwd.seq++
	f.fwd.inflight[f.fwd.seq] = func(_ byte, _ []byte, err error) { failed <- err }
	f.fwd.mu.Unlock()

	if err := l.raft.LeadershipTransfer().Error(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-failed:
		if !errors.Is(err, errForwardBroken) {
			t.Fatalf("in-flight request failed with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a request in flight to the old leader still waits")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		l.fwdMu.Lock()
		served := len(l.fwdConns)
		l.fwdMu.Unlock()
		if served == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the old leader still serves %d forwarding connections", served)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRemovedMemberFailsAwaitedProposals checks that a member whose Raft
// stopped because it removed itself from the ensemble fails the proposals
// awaited on it: Raft resolves none of them once it has shut down.
func TestRemovedMemberFailsAwaitedProposals(t *testing.T) {
	c := newCluster(t, 3, nil)
	l := c.leader()
	w := &chanWaiter{failed: make(chan error, 1)}
	l.waiters.put(12345, w)
	if err := l.raft.RemoveServer(raft.ServerID(fmt.Sprint(l.ID())), 0, 0).Error(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-w.failed:
		if !errors.Is(err, errNotMember) {
			t.Fatalf("failed with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a proposal awaited on the removed member still waits")
	}
}

// chanWaiter reports a failure on a channel.
type chanWaiter struct{ failed chan error }

func (w *chanWaiter) Applied(*znode.Result, *znode.Tree) {}
func (w *chanWaiter) Failed(err error)                   { w.failed <- err }

// TestLeadershipWonBeforeItsWatchStarts: a member that won the first
// election before its watchLeadership goroutine registered its observer
// (held back here until the election is over, as a loaded machine may
// schedule it) still knows it leads: leader_uptime counts, where it read
// 0 for the whole first term.
func TestLeadershipWonBeforeItsWatchStarts(t *testing.T) {
	c := newCluster(t, 3, func(cfg *Config) {
		cfg.beforeLeadershipWatch = func(n *Node) {
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
				if addr, _ := n.raft.LeaderWithID(); addr != "" {
					return
				}
			}
		}
	})
	l := c.leader()
	deadline := time.Now().Add(5 * time.Second)
	for l.LeaderUptime() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the leader's uptime is 0: its leadership went unseen")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
