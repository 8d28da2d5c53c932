package ensemble

import (
	"time"

	"github.com/hashicorp/raft"
	"github.com/zkraft/zkraft/backend"
	"go.uber.org/zap"
)

// The lines an operator follows are the member's own, one INFO line per
// event with its figures as fields (raft's own lines pass only at debug
// level, or warn and up, see hclog.go):
//
//	leader elected       every member, once per term: term, leaderId, leaderAddr, electionMs
//	leadership lost      the member that led: the term it led, its state now
//	membership changed   the leader that ran the reconfig: added, removed, voters, observers
//	snapshot taken       the member that took it: index, term, bytes, durationMs
//	snapshot installed   a member sent the leader's snapshot: index, term, durationMs
//	session expired      the leader, once per session: session, timeoutMs
//
// docs/operations.md ("Monitoring") lists them for operators.

// watchEvents logs the leadership lines and counts leader changes
// (LeaderChanges), from Raft's observations (observeLeadership); the
// leader known when the observer is registered is logged too, so a lone
// member's first election is not missed.
func (n *Node) watchEvents() {
	defer n.wg.Done()
	ch, stop := n.observeLeadership()
	defer stop()
	ev := &leaderEvents{n: n, lookingSince: n.started}
	n.timings.looking.Add(1) // a member starts without a leader, as ZooKeeper's starts LOOKING
	if addr, id := n.raft.LeaderWithID(); id != "" {
		ev.leaderIs(addr, id)
	}
	ev.stateIs(n.raft.State())
	for {
		select {
		case o := <-ch:
			switch d := o.Data.(type) {
			case raft.RaftState:
				ev.stateIs(d)
			case raft.LeaderObservation:
				ev.leaderIs(d.LeaderAddr, d.LeaderID)
			}
		case <-n.done:
			return
		}
	}
}

// leaderEvents is watchEvents' state (its goroutine alone).
type leaderEvents struct {
	n            *Node
	leading      bool
	ledTerm      uint64        // the term this member led in, while leading
	leaderID     raft.ServerID // the leader last logged
	leaderTerm   uint64        // and its term
	lookingSince time.Time     // when this member last knew no leader; zero while it knows one
}

// leaderIs notes the leader Raft reports ("" while there is none).
func (e *leaderEvents) leaderIs(addr raft.ServerAddress, id raft.ServerID) {
	if id == "" {
		if e.lookingSince.IsZero() {
			e.n.timings.looking.Add(1)
			e.lookingSince = time.Now()
		}
		return
	}
	term := e.n.raft.CurrentTerm()
	if id == e.leaderID && term == e.leaderTerm {
		return
	}
	var took time.Duration
	if !e.lookingSince.IsZero() {
		took = time.Since(e.lookingSince)
	}
	e.leaderID, e.leaderTerm, e.lookingSince = id, term, time.Time{}
	e.n.leaderChanges.Add(1)
	if took > 0 {
		e.n.timings.elections.Add(took.Milliseconds())
	}
	if e.n.cfg.Metrics.Election != nil && took > 0 {
		e.n.cfg.Metrics.Election(took)
	}
	leader, _ := memberID(id)
	e.n.log.Info("leader elected", zap.Uint64("term", term), zap.Int64("leaderId", leader),
		zap.String("leaderAddr", string(addr)), zap.Int64("electionMs", took.Milliseconds()))
}

// stateIs notes this member's Raft state.
func (e *leaderEvents) stateIs(s raft.RaftState) {
	if s == raft.Leader {
		if !e.leading {
			e.leading, e.ledTerm = true, e.n.raft.CurrentTerm()
		}
		return
	}
	if !e.leading {
		return
	}
	e.leading = false
	e.n.log.Info("leadership lost", zap.Uint64("term", e.ledTerm), zap.String("state", s.String()))
}

// logMembershipChange logs a reconfig the leader carried out.
func (n *Node) logMembershipChange(current, next []backend.Peer) {
	old := make(map[int64]backend.Peer, len(current))
	for _, p := range current {
		old[p.ID] = p
	}
	var added, removed []int64
	voters, observers := 0, 0
	for _, p := range next {
		if p.Observer {
			observers++
		} else {
			voters++
		}
		if o, ok := old[p.ID]; !ok || o.Addr != p.Addr || o.Observer != p.Observer {
			added = append(added, p.ID)
		}
		delete(old, p.ID)
	}
	for _, p := range current {
		if _, gone := old[p.ID]; gone {
			removed = append(removed, p.ID)
		}
	}
	n.log.Info("membership changed", zap.Int64s("added", added), zap.Int64s("removed", removed),
		zap.Int("voters", voters), zap.Int("observers", observers))
}
