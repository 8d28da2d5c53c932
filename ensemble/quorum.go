package ensemble

import (
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/raft"
	"go.uber.org/zap"
)

// A leader leads only while a quorum of voters is in contact with it, as
// a ZooKeeper leader does (it counts the followers that acked within
// syncLimit ticks, every tick, and goes back to LOOKING without a
// quorum). A voter is in contact while it has answered a request this
// leader sent less than the lease (P less a campaignStep) ago, and has not
// gone since: closed one of its connections or refused a dial
// (contact.go). So a leader notices at once when its followers' processes
// end (SIGTERM, a crash: their kernels close the connections), and within
// P when they fall silent (SIGSTOP, a partition, a dead host).
//
// The moment it loses the quorum the leader serves nothing more: its
// HasQuorum is false from then on in this term (so srvr answers "not
// currently serving", or Mode: read-only with read-only mode, and no
// session is created or resumed here), the QuorumLost hook closes its
// clients' read-write connections at once, and its Raft is told to stop
// leading (a TimeoutNow: it becomes a candidate, and leads again as soon
// as a quorum answers). hashicorp/raft would step down on its own only
// once it has heard nothing from a quorum for its lease, P, counted from
// when the answers came and checked at its own pace: 10 to 12 s with the
// usual zoo.cfg.
//
// Why no other leader can have changed anything it serves until then:
// another can only be elected by a quorum, which shares a voter with the
// quorum this leader is in contact with; that voter heard from this
// leader after the request it last answered was sent, and votes for
// another only once it has not heard from a leader for P (Raft's
// heartbeat timeout, and the campaigns of campaign.go), or once this
// leader's port refuses a member (leaderloss.go: its process is gone).
// The one exception is a firewall that rejects one member's connections
// to a live leader with resets: that member elects itself at once and the
// others vote for it; this leader learns of the new term at its next
// heartbeat, P/10 to P/5 later. The lease counts from the sending, and is
// a campaignStep shorter than P to cover the moment it takes this
// goroutine to act.

// quorumLease is how long a voter's answer keeps it in contact, counted
// from when the request it answered was sent: P less a campaignStep.
func (n *Node) quorumLease() time.Duration { return n.electionTimeout() - n.campaignStep() }

// leadingSince is when this member began leading in term, on the
// transport's clock: noted when watchLeadership sees it become leader,
// or else the first time it is asked in that term.
func (n *Node) leadingSince(term uint64) int64 {
	n.leadMu.Lock()
	defer n.leadMu.Unlock()
	if n.leadTerm != term {
		n.leadTerm, n.leadFrom = term, n.trans.now()
	}
	return n.leadFrom
}

// leaderQuorum reports whether this leader has a quorum of voters in
// contact in term, and if so for how long at least, at most the lease;
// with explain, missing describes the voters out of contact.
func (n *Node) leaderQuorum(term uint64, explain bool) (ok bool, left time.Duration, missing []string) {
	since := n.leadingSince(term)
	now := n.trans.now()
	lease := n.quorumLease()
	// Raft's own view of the voters (a copy it keeps for readers), which
	// is what its elections count.
	servers := n.raft.GetConfiguration().Configuration().Servers
	self := raft.ServerID(fmt.Sprint(n.cfg.ID))
	voters, contact := 0, 0
	var until []int64 // when each other voter in contact falls out of it
	for _, s := range servers {
		if s.Suffrage != raft.Voter {
			continue
		}
		voters++
		if s.ID == self {
			contact++ // the leader is in contact with itself
			continue
		}
		m := n.trans.contactOf(s.Address)
		heard := max(m.sent.Load(), since)
		if m.inContact(since, now, lease) {
			until = append(until, heard+int64(lease))
			continue
		}
		if !explain {
			continue
		}
		why := fmt.Sprintf("%s silent for %v", s.ID, time.Duration(now-heard).Round(time.Millisecond))
		if m.closed.Load() >= heard {
			why = fmt.Sprintf("%s gone", s.ID)
		}
		missing = append(missing, why)
	}
	quorum := voters/2 + 1
	if contact+len(until) < quorum {
		return false, 0, missing
	}
	// The quorum holds until the one of the others that completes it
	// drops: the (quorum-contact)th latest.
	need := quorum - contact
	if need < 1 {
		return true, lease, missing
	}
	slices.Sort(until)
	slices.Reverse(until)
	return true, time.Duration(until[need-1] - now), missing
}

// keepQuorum is the goroutine that has a leader without a quorum stop
// leading (see above). It checks when a member is noted gone, when the
// quorum would run out, and every P besides (when this member becomes
// leader, say).
func (n *Node) keepQuorum() {
	defer n.wg.Done()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		timer.Reset(n.checkQuorum())
		select {
		case <-n.done:
			return
		case <-n.trans.contactLost:
		case <-n.quorumWake:
		case <-timer.C:
		}
	}
}

// checkQuorum acts on a leader that lost its quorum and says when to
// check next.
func (n *Node) checkQuorum() time.Duration {
	if !n.IsLeader() {
		return n.electionTimeout()
	}
	term := n.raft.CurrentTerm()
	if n.lostTerm.Load() == term {
		// Raft was told to stop leading; it had not taken the request yet.
		n.stepDown()
		return n.campaignStep()
	}
	ok, left, missing := n.leaderQuorum(term, true)
	if ok {
		return left + time.Millisecond
	}
	n.lostTerm.Store(term)
	n.log.Warn("lost contact with a quorum of voters; no longer leading",
		zap.Uint64("term", term), zap.Strings("out of contact", missing))
	if h := n.fsm.hooks.Load(); h != nil && h.QuorumLost != nil {
		h.QuorumLost()
	}
	n.stepDown()
	return n.campaignStep()
}

// stepDown tells this leader's Raft to stop leading: a TimeoutNow, which
// makes it a candidate at once (hashicorp/raft has no other way in).
func (n *Node) stepDown() {
	req := &raft.TimeoutNowRequest{RPCHeader: raft.RPCHeader{
		ProtocolVersion: raft.ProtocolVersionMax,
		ID:              []byte(fmt.Sprint(n.cfg.ID)),
	}}
	if err := n.trans.deliver(raft.RPC{Command: req, RespChan: make(chan raft.RPCResponse, 1)}, n.campaignStep()); err != nil {
		n.log.Warn("cannot make Raft stop leading; trying again", zap.Error(err))
	}
}
