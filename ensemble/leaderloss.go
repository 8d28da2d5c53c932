package ensemble

import (
	"time"

	"github.com/hashicorp/raft"

	"go.uber.org/zap"
)

// A follower learns that its leader is gone by missing heartbeats: Raft
// waits a heartbeat timeout (tickTime×syncLimit/20, 500 ms with the usual
// zoo.cfg), randomized up to twice that, before it starts an election.
// When the leader's process dies, though, the kernel closes its
// connections at once, and its followers see their append streams end.
// ZooKeeper's followers react to exactly that (their leader's socket
// closing) and elect at once.
//
// leaderStreamLost does the closest thing hashicorp/raft allows, which has
// no call to start an election: it lowers this follower's heartbeat and
// election timeouts for fastElectionWindow to the shortest Raft accepts
// (its leader lease, half the usual timeout), and Raft's follower loop
// re-arms its timer with the shorter value at once. A leader that is alive
// and only closed a stream keeps heartbeating (every tenth of the usual
// timeout), so the follower still sees it; when the window ends the usual
// timeouts come back.

// fastElectionWindow is how long the lowered timeouts last after the
// leader's last stream ended, in units of the usual election timeout: long
// enough for both followers' timers to fire and an election to finish.
const fastElectionWindow = 3

// leaderStreamLost is called by the transport when an append stream from
// leader (its address) ended without this member closing it.
func (n *Node) leaderStreamLost(leader string) {
	if !n.raftSet.Load() || n.raft.State() != raft.Follower {
		return
	}
	if addr, _ := n.raft.LeaderWithID(); string(addr) != leader {
		return // a stream from a former leader
	}
	normal, fast := n.electionTimeout(), n.leaderLease()
	n.reloadMu.Lock()
	defer n.reloadMu.Unlock()
	n.fastUntil = time.Now().Add(fastElectionWindow * normal)
	if n.fastOn {
		return
	}
	if err := n.setElectionTimeouts(fast); err != nil {
		n.log.Warn("cannot lower the election timeout after losing the leader", zap.Error(err))
		return
	}
	n.fastOn = true
	n.log.Info("leader's stream closed; election timeout lowered", zap.String("leader", leader), zap.Duration("timeout", fast))
	time.AfterFunc(fastElectionWindow*normal, n.restoreElectionTimeouts)
}

// restoreElectionTimeouts puts the usual timeouts back once the window
// after the last lost stream has passed (a timer; on a closed member it
// only updates the config of a Raft that has stopped).
func (n *Node) restoreElectionTimeouts() {
	n.reloadMu.Lock()
	defer n.reloadMu.Unlock()
	if wait := time.Until(n.fastUntil); wait > 0 {
		time.AfterFunc(wait, n.restoreElectionTimeouts)
		return
	}
	if err := n.setElectionTimeouts(n.electionTimeout()); err != nil {
		n.log.Warn("cannot restore the election timeout", zap.Error(err))
	}
	n.fastOn = false
}

// setElectionTimeouts sets Raft's heartbeat and election timeouts; the
// caller holds reloadMu.
func (n *Node) setElectionTimeouts(d time.Duration) error {
	rc := n.raft.ReloadableConfig()
	rc.HeartbeatTimeout, rc.ElectionTimeout = d, d
	return n.raft.ReloadConfig(rc)
}
