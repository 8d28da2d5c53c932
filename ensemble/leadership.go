package ensemble

import (
	"errors"
	"time"

	"github.com/hashicorp/raft"
	"go.uber.org/zap"
)

// errLeaderChanged fails the requests a follower had in flight on its
// forwarding connection when the leader it forwarded to stopped leading.
var errLeaderChanged = errors.New("ensemble: leader changed")

// errNotMember fails the proposals awaited on a member whose Raft stopped
// while the member stays open: it was removed from the ensemble.
var errNotMember = errors.New("ensemble: no longer a member of the ensemble")

// watchLeadership ends the waits that a change of leader leaves without an
// answer. A forwarded write is answered by the leader it was sent to, and
// a leader that stops leading may never answer: hashicorp/raft leaves the
// futures still in its apply queue unresolved when it shuts down (a leader
// removing itself does), and an old leader cut off by a partition answers
// into the void. ZooKeeper ends such waits the same way: a follower that
// loses its leader, and a leader that loses its quorum, drop their
// connections, and clients reconnect and learn their writes' fate.
//
//   - A leader that stops leading closes the forwarding connections it
//     served; their followers fail what was in flight on them.
//   - A follower whose leader changed breaks its forwarding connection to
//     the old one.
//   - A Raft that shut down under an open member (it removed itself) fails
//     every proposal awaited on the member, and the member closes its
//     member port: to the others it is gone, and if it led, they elect its
//     successor at once (campaign.go), as after its process died.
func (n *Node) watchLeadership() {
	defer n.wg.Done()
	if n.cfg.beforeLeadershipWatch != nil {
		n.cfg.beforeLeadershipWatch(n)
	}
	ch, stop := n.observeLeadership()
	defer stop()
	// What Raft did before the observer was registered (this goroutine
	// scheduled late on a loaded machine, after a first election) is read
	// from its state; seeing it again in an observation changes nothing.
	if addr, _ := n.raft.LeaderWithID(); addr != "" {
		n.fwd.leaderIs(string(addr))
	}
	if st := n.raft.State(); st == raft.Leader {
		n.stateIs(st)
	}
	for {
		select {
		case o := <-ch:
			switch d := o.Data.(type) {
			case raft.RaftState:
				n.stateIs(d)
			case raft.LeaderObservation:
				n.fwd.leaderIs(string(d.LeaderAddr))
			}
		case <-n.done:
			return
		}
	}
}

// stateIs acts on Raft's state st (watchLeadership).
func (n *Node) stateIs(st raft.RaftState) {
	if st != raft.Leader {
		n.leaderSince.Store(0)
		n.dropServedForwards()
	} else {
		// Kept if already set: the state seen twice, from Raft's state
		// and from its observation, is one leadership.
		n.leaderSince.CompareAndSwap(0, time.Now().UnixNano())
		n.leadingSince(n.raft.CurrentTerm())
		select {
		case n.quorumWake <- struct{}{}:
		default:
		}
	}
	if st == raft.Shutdown {
		n.waiters.failAll(errNotMember)
		n.leaveEnsemble()
	}
}

// observeLeadership registers an observer of Raft's state and leader
// changes and returns its channel, and the function that deregisters
// it. Raft never blocks on an observer: an observation that finds the
// channel full (64 waiting) is dropped.
func (n *Node) observeLeadership() (<-chan raft.Observation, func()) {
	ch := make(chan raft.Observation, 64)
	obs := raft.NewObserver(ch, false, func(o *raft.Observation) bool {
		switch o.Data.(type) {
		case raft.RaftState, raft.LeaderObservation:
			return true
		}
		return false
	})
	n.raft.RegisterObserver(obs)
	return ch, func() { n.raft.DeregisterObserver(obs) }
}

// leaveEnsemble closes the member port and the member connections of a
// member whose Raft stopped while it stays open (Close does so itself).
func (n *Node) leaveEnsemble() {
	select {
	case <-n.done:
		return
	default:
	}
	if err := n.trans.Close(); err != nil {
		n.log.Warn("closing the member port", zap.Error(err))
	}
	n.mux.close()
}

// dropServedForwards closes the followers' forwarding connections this
// member serves (as leader); new ones are still accepted.
func (n *Node) dropServedForwards() {
	n.fwdMu.Lock()
	defer n.fwdMu.Unlock()
	for c := range n.fwdConns {
		c.Close()
	}
}

// leaderIs breaks the forwarding connection unless it goes to addr, the
// current leader ("" when none is known): requests in flight to an old
// leader fail at once instead of waiting for an answer that may not come.
func (f *forwarder) leaderIs(addr string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conn != nil && f.addr != addr {
		f.breakLocked(f.conn, errLeaderChanged)
	}
}
