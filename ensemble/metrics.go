package ensemble

import (
	"github.com/hashicorp/raft"
	"github.com/zkraft/zkraft/backend"
)

// Indexes returns this member's Raft positions.
func (n *Node) Indexes() backend.RaftIndexes {
	if n.raft == nil {
		return backend.RaftIndexes{}
	}
	return backend.RaftIndexes{Last: n.raft.LastIndex(), Commit: n.raft.CommitIndex(), Applied: n.raft.AppliedIndex()}
}

// LeaderChanges is how many leaders this member has seen elected since it
// started (once per term; its own elections included).
func (n *Node) LeaderChanges() int64 { return n.leaderChanges.Load() }

// FollowerLags returns, on a leader of an ensemble, each other member's
// lag; nil on any other member.
func (n *Node) FollowerLags() []backend.FollowerLag {
	if n.trans == nil || !n.IsLeader() {
		return nil
	}
	last := n.raft.LastIndex()
	var out []backend.FollowerLag
	for _, p := range n.Members() {
		if p.ID == n.cfg.ID {
			continue
		}
		l := backend.FollowerLag{ID: p.ID, Observer: p.Observer, Entries: last}
		if idx, ok := n.trans.memberLastLog(raft.ServerAddress(p.Addr)); ok {
			l.Answered = true
			if idx < last {
				l.Entries = last - idx
			} else {
				l.Entries = 0
			}
		}
		out = append(out, l)
	}
	return out
}
