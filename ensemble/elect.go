package ensemble

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/raft"
	"github.com/zkraft/zkraft/backend"
)

// The two ways campaign.go starts an election without a timer, and what
// it asks about the membership and the log to choose between them.

// voterRank is this member's place, from 0, among the voting members other
// than except (a member address) in order of id, and how many they are;
// rank is -1 when this member is not among them.
func (n *Node) voterRank(except string) (rank, voters int) {
	members, _ := n.currentMembers()
	slices.SortFunc(members, func(a, b backend.Peer) int { return cmp.Compare(a.ID, b.ID) })
	rank = -1
	for _, p := range members {
		if p.Observer || p.Addr == except {
			continue
		}
		if p.ID == n.cfg.ID {
			rank = voters
		}
		voters++
	}
	return rank, voters
}

// earlierAlive reports whether a voting member before this one in the
// order of voterRank(except) answers a probe (leaderloss.go).
func (n *Node) earlierAlive(except string) bool {
	members, _ := n.currentMembers()
	slices.SortFunc(members, func(a, b backend.Peer) int { return cmp.Compare(a.ID, b.ID) })
	for _, p := range members {
		if p.ID == n.cfg.ID {
			return false
		}
		if !p.Observer && p.Addr != except && n.probe(p.Addr) == probeAnswered {
			return true
		}
	}
	return false
}

// logAhead reports whether this member's log is more up to date than one
// ending at index in term: Raft then refuses that candidate its vote.
func (n *Node) logAhead(index, term uint64) bool {
	var last raft.Log
	if err := n.logs.GetLog(n.raft.LastIndex(), &last); err != nil {
		return false // the log ends in a snapshot: do not guess
	}
	return last.Term > term || last.Term == term && last.Index > index
}

// errNotFollower: only a follower is told to start an election.
var errNotFollower = errors.New("ensemble: not a follower")

// startElection makes this follower a candidate at once: its Raft gets
// the TimeoutNow a leader sends the target of a leadership transfer.
func (n *Node) startElection() error {
	if n.raft.State() != raft.Follower {
		return errNotFollower
	}
	req := &raft.TimeoutNowRequest{RPCHeader: raft.RPCHeader{
		ProtocolVersion: raft.ProtocolVersionMax,
		ID:              []byte(raftID(n.cfg.ID)),
	}}
	return n.trans.deliver(raft.RPC{Command: req, RespChan: make(chan raft.RPCResponse, 1)}, n.campaignStep())
}

// checkLeaderNow has Raft run its heartbeat check now rather than when its
// timer (P to 2P) fires: a follower that has not heard from a leader for P
// (or ever) then elects, pre-vote first. Raft re-arms its timer at once
// when the heartbeat timeout is lowered, so the timeout goes up by a
// millisecond and back down.
func (n *Node) checkLeaderNow() error {
	n.reloadMu.Lock()
	defer n.reloadMu.Unlock()
	p := n.electionTimeout()
	rc := n.raft.ReloadableConfig()
	rc.HeartbeatTimeout, rc.ElectionTimeout = p+time.Millisecond, p+time.Millisecond
	if err := n.raft.ReloadConfig(rc); err != nil {
		return fmt.Errorf("ensemble: raise the heartbeat timeout: %w", err)
	}
	rc.HeartbeatTimeout, rc.ElectionTimeout = p, p
	if err := n.raft.ReloadConfig(rc); err != nil {
		return fmt.Errorf("ensemble: restore the heartbeat timeout: %w", err)
	}
	return nil
}
