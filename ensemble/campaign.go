package ensemble

import (
	"time"

	"github.com/hashicorp/raft"
	"go.uber.org/zap"
)

// The elections Raft's patient timers would start too late (timeouts.go)
// are started by one goroutine per member, campaign, without a timer:
//
//   - The first. A member that starts (a fresh ensemble, a restart) and
//     knows no leader has Raft run its heartbeat check at once, and again
//     while none appears, the members one campaignStep apart in order of
//     id so that their candidacies do not split the vote; a member that
//     sees another's vote request waits a step. Raft elects only if it has
//     not heard from a leader for P, and with a pre-vote that members
//     which have a leader refuse: a member restarting into a running
//     ensemble disturbs nobody.
//   - The one after the leader's process died (leaderloss.go). Once a
//     probe finds the leader's port closed, the first surviving voter in
//     order of id starts an election at once: Raft's TimeoutNow, as a
//     leadership transfer's target gets it, which skips the pre-vote and
//     has members that still know the dead leader vote all the same (they
//     only forget it after P). The next voters' turns come a campaignStep
//     apart, but each only elects if every voter before it is gone too
//     (its port does not answer): one candidate per term, however slow
//     its vote requests under load. A member whose log is ahead of the
//     candidate's refuses it its vote, so it starts its own election at
//     once, with a term above that candidate's; a member that can vote
//     for the candidate, or sees that another campaigns, holds back.
//     Nothing here runs longer than P: then Raft's timers take over.
//   - The one after a silent leader. Raft's timers fire P to 2P after the
//     leader was last heard from, each member's apart, and a member whose
//     timer has not fired still knows the leader and refuses the first
//     candidate's pre-vote. A member that sees a vote or pre-vote request
//     has Raft check once its own leader has been silent for P, the
//     members a campaignStep apart in order of id.
//
// Only a follower is ever told to elect at once, and only after its
// leader's port refused a connection: a live leader, however slow, is
// never deposed. The heartbeat checks elect only where Raft's own timer
// would have, had it fired: after P without a word from a leader.

// campaignState is what the campaign goroutine is doing.
type campaignState int

const (
	campaignIdle    campaignState = iota // nothing to start
	campaignFirst                        // no leader known since this member started
	campaignProbe                        // the leader's stream ended: is its process gone?
	campaignRecover                      // the leader's process is gone: elect its successor
	campaignSilent                       // another member campaigns: has the leader been silent for P?
)

// campaigner is the campaign goroutine's state; only that goroutine uses it.
type campaigner struct {
	n     *Node
	state campaignState
	next  time.Time // the next tick; zero when idle
	until time.Time // when the state is left to Raft's timers

	// heard is when a vote or pre-vote request was last seen.
	heard time.Time

	// For campaignProbe and campaignRecover.
	leader    string        // the lost leader's member address
	term      uint64        // the term it led
	since     time.Time     // when its stream was seen to end
	probeWait time.Duration // until the next probe
	turn      time.Time     // when this member's turn to elect comes
	hold      time.Time     // another member campaigns: wait until then
	// kicked is the leader whose successor this member last started an
	// election for, at kickedAt: the streams from it that end later
	// change nothing.
	kicked   string
	kickedAt time.Time
	// behind is the term of a vote request from a candidate whose log is
	// behind this member's (0: none): it will not get this member's vote.
	// behindSeen is when it came.
	behind     uint64
	behindSeen time.Time
}

// campaign is the goroutine that starts elections without a timer.
func (n *Node) campaign() {
	defer n.wg.Done()
	ch := make(chan raft.Observation, 16)
	obs := raft.NewObserver(ch, false, func(o *raft.Observation) bool {
		switch o.Data.(type) {
		case raft.RequestVoteRequest, raft.RequestPreVoteRequest:
			return true
		}
		return false
	})
	n.raft.RegisterObserver(obs)
	defer n.raft.DeregisterObserver(obs)

	c := &campaigner{n: n}
	c.first(time.Now())
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		if c.next.IsZero() {
			timer.Stop()
		} else {
			timer.Reset(time.Until(c.next))
		}
		select {
		case <-n.done:
			return
		case leader := <-n.lostLeader:
			c.lost(leader, time.Now())
		case o := <-ch:
			c.voteRequested(o.Data, time.Now())
		case <-timer.C:
			c.tick(time.Now())
		}
	}
}

func (c *campaigner) idle() {
	c.state = campaignIdle
	c.next = time.Time{}
}

func (c *campaigner) tick(now time.Time) {
	c.next = time.Time{}
	switch c.state {
	case campaignFirst:
		c.tickFirst(now)
	case campaignProbe:
		c.tickProbe(now)
	case campaignRecover:
		c.tickRecover(now)
	case campaignSilent:
		c.tickSilent(now)
	}
}

// first sets up the first election: this member's turn comes rank steps
// after its start. A member waiting to be added (Join) does not elect.
func (c *campaigner) first(now time.Time) {
	rank, _ := c.n.voterRank("")
	if c.n.cfg.Join || rank < 0 {
		return
	}
	c.state = campaignFirst
	c.until = now.Add(c.n.electionTimeout())
	c.next = now.Add(time.Duration(rank) * c.n.campaignStep())
}

func (c *campaigner) tickFirst(now time.Time) {
	n := c.n
	if addr, _ := n.raft.LeaderWithID(); addr != "" || now.After(c.until) {
		c.idle()
		return
	}
	step := n.campaignStep()
	if quiet := c.heard.Add(step); now.Before(quiet) {
		c.next = quiet // another member is campaigning
		return
	}
	_, voters := n.voterRank("")
	// A heartbeat check, not a TimeoutNow: a candidacy Raft begins for a
	// TimeoutNow (a leadership transfer's) does not yield to a leader
	// elected in its own term, and another member may win this one (its
	// turn comes a step later, and this member's vote requests may be
	// slower than that). It stays a candidate that knows the leader for up
	// to 2P, ignores its death and refuses the others' pre-votes.
	if n.raft.State() == raft.Follower {
		if err := n.checkLeaderNow(); err != nil {
			n.log.Warn("cannot start the first election", zap.Error(err))
		}
	}
	c.next = now.Add(time.Duration(voters) * step)
}

// lost starts checking on leader, whose append stream ended.
func (c *campaigner) lost(leader string, now time.Time) {
	n := c.n
	if (c.state == campaignProbe || c.state == campaignRecover) && c.leader == leader ||
		c.kicked == leader && now.Sub(c.kickedAt) < n.campaignStep() {
		return // already on it (each of its streams ends)
	}
	if addr, _ := n.raft.LeaderWithID(); string(addr) != leader || n.raft.State() != raft.Follower {
		return
	}
	c.state = campaignProbe
	c.leader, c.term, c.since = leader, n.raft.CurrentTerm(), now
	c.until = now.Add(n.electionTimeout())
	c.probeWait = 10 * time.Millisecond
	c.behind, c.hold = 0, time.Time{}
	c.next = now
}

// tickProbe dials the lost leader's port: refused, its process is gone;
// answered, it may still be closing (probe again, less and less often)
// unless it was heard from since; unreachable, Raft's timers decide.
func (c *campaigner) tickProbe(now time.Time) {
	n := c.n
	if addr, _ := n.raft.LeaderWithID(); string(addr) != c.leader || n.raft.State() != raft.Follower || now.After(c.until) {
		c.idle()
		return
	}
	switch n.probe(c.leader) {
	case probeRefused:
		c.recover(time.Now())
	case probeAnswered:
		if n.raft.LastContact().After(c.since) {
			c.idle() // it is alive and leading
			return
		}
		c.next = time.Now().Add(c.probeWait)
		c.probeWait = min(2*c.probeWait, n.campaignStep())
	default:
		c.idle()
	}
}

// recover sets up the election of the dead leader's successor: this
// member's turn comes rank steps from now, rank among the other voters.
func (c *campaigner) recover(now time.Time) {
	n := c.n
	rank, _ := n.voterRank(c.leader)
	if rank < 0 {
		c.idle() // an observer does not elect
		return
	}
	n.log.Info("the leader's process is gone; electing its successor",
		zap.String("leader", c.leader), zap.Int("turn", rank), zap.Duration("noticed after", now.Sub(c.since)))
	c.state = campaignRecover
	c.turn = now.Add(time.Duration(rank) * n.campaignStep())
	c.until = now.Add(n.electionTimeout())
	c.next = now
}

func (c *campaigner) tickRecover(now time.Time) {
	n := c.n
	if n.raft.State() != raft.Follower || now.After(c.until) {
		c.idle() // a candidate, a leader, or Raft's timers' turn
		return
	}
	if addr, _ := n.raft.LeaderWithID(); addr != "" && string(addr) != c.leader {
		c.idle() // elected
		return
	}
	at := c.turn
	switch {
	case c.behind != 0:
		// The candidate cannot have this member's vote; elect at once,
		// once Raft has taken the candidate's term (it does before it
		// answers), so that this member's candidacy has a higher one.
		if n.raft.CurrentTerm() < c.behind && now.Sub(c.behindSeen) < n.campaignStep() {
			c.next = now.Add(time.Millisecond)
			return
		}
		at = now
	case c.hold.IsZero() && n.raft.CurrentTerm() > c.term:
		// Raft took a newer term: another member campaigns, and its vote
		// request has not been seen here yet (voteRequested then says
		// how long to wait). Give it a round rather than depose it.
		_, voters := n.voterRank(c.leader)
		c.hold = now.Add(time.Duration(voters) * n.campaignStep())
		at = later(at, c.hold)
	default:
		at = later(at, c.hold)
	}
	if now.Before(at) {
		c.next = at
		return
	}
	if c.behind == 0 && n.earlierAlive(c.leader) {
		// A member whose turn came before this one's is alive, so it
		// campaigns; under load its vote request can take longer than
		// a step to arrive, and two candidates in one term split the
		// vote until Raft's timers (P to 2P) end it. Wait for the
		// request (and take over, or leave the candidate to win), or
		// for the new leader.
		c.next = now.Add(n.campaignStep())
		return
	}
	if err := n.startElection(); err != nil {
		n.log.Warn("cannot start an election", zap.Error(err))
	} else {
		n.log.Info("starting an election", zap.String("former leader", c.leader))
		c.kicked, c.kickedAt = c.leader, now
	}
	c.idle()
}

// voteRequested notes another member's campaign (a vote or pre-vote
// request). A member with nothing else going on checks for a silent leader
// once it has been silent for P (silent). While the lost leader's
// successor is sought, a candidate told to elect at once (a member that
// found the leader gone, as this one does) whose log is behind this
// member's will not get its vote: this member takes over. One that can
// get it is left to win.
func (c *campaigner) voteRequested(data any, now time.Time) {
	c.heard = now
	if c.state == campaignIdle {
		c.silent(now)
	}
	req, ok := data.(raft.RequestVoteRequest)
	if !ok || !req.LeadershipTransfer || c.state != campaignProbe && c.state != campaignRecover || req.Term <= c.term {
		return
	}
	if c.n.logAhead(req.LastLogIndex, req.LastLogTerm) {
		if req.Term > c.behind {
			c.behind, c.behindSeen = req.Term, now
		}
	} else {
		// Raft gives the candidate this member's vote, unless it gave
		// it to another in that term: with it, the candidate has a
		// majority of three. Leave the election to it.
		c.hold = c.until
	}
	if c.state == campaignRecover {
		c.next = now
	}
}

// silent sets up a heartbeat check for when this follower's leader will
// have been silent for P. Another member campaigns when its own leader
// has been silent that long (a leader cut off silently, stopped, or on a
// dead host), and Raft's timers fire anywhere from P to 2P after the last
// contact, each member's apart: a member whose timer has not fired yet
// still knows the leader, refuses the first candidate's pre-vote, and
// would leave it waiting for its own timer.
//
// The checks come one campaignStep apart in order of id: every member
// that sees the first candidate's request would otherwise turn candidate
// in the same instant, each vote for itself, and split the vote for
// another P to 2P (a soak once went 50 s without a leader so). Staggered,
// each candidate is granted the pre-votes of those that turned candidate
// before it, and the last to check wins at once.
func (c *campaigner) silent(now time.Time) {
	n := c.n
	rank, _ := n.voterRank("")
	if rank < 0 || n.raft.State() != raft.Follower {
		return // an observer does not elect
	}
	c.state = campaignSilent
	c.next = later(n.raft.LastContact().Add(n.electionTimeout()), now).Add(time.Duration(rank) * n.campaignStep())
}

func (c *campaigner) tickSilent(now time.Time) {
	n := c.n
	c.idle()
	if n.raft.State() != raft.Follower || now.Sub(n.raft.LastContact()) < n.electionTimeout() {
		return // the leader was heard from
	}
	if err := n.checkLeaderNow(); err != nil {
		n.log.Warn("cannot check for a silent leader", zap.Error(err))
	}
}

// later is the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
