package ensemble

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// ErrHandOffTimeout is returned when no follower took over leadership in
// time; the member then stops as the leader and the others elect.
var ErrHandOffTimeout = errors.New("ensemble: leadership hand-off timed out")

// ErrNoSuccessor is returned by HandOff when no voting follower is
// answering: there is nobody to hand leadership to, and the member may
// stop at once, as a ZooKeeper leader does.
var ErrNoSuccessor = errors.New("ensemble: no follower answering to hand leadership to")

// errSuccessorSilent: the follower leadership was being handed to stopped
// answering.
var errSuccessorSilent = errors.New("ensemble: the follower taking over leadership stopped answering")

// HandOff passes leadership to the most up-to-date follower that is
// answering before a graceful stop (Raft's leadership transfer: the
// follower is caught up, then told to start its election at once), so the
// others need not wait out an election timeout. Writes reaching this
// member meanwhile are refused, as in any change of leader. It returns nil
// at once on a follower or a lone member, ErrNoSuccessor at once when no
// voting follower answers (they stopped, or fell silent), and gives up as
// soon as its follower stops answering: a leader whose followers are gone
// stops at once, not after Raft's transfer timeout (P).
func (n *Node) HandOff(timeout time.Duration) error {
	if n.fwd == nil || !n.IsLeader() {
		return nil
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		err := n.handOffOnce(deadline.C)
		if err == nil || errors.Is(err, ErrHandOffTimeout) || errors.Is(err, errSuccessorSilent) ||
			errors.Is(err, ErrNoSuccessor) || !n.IsLeader() {
			return err
		}
		// Raft gives a transfer one election timeout: on a loaded machine
		// the follower may not have caught up or campaigned by then, and
		// this member is still the leader. Try again, to the follower
		// that is most up to date now, until the caller's time runs out.
		select {
		case <-deadline.C:
			return err
		default:
		}
	}
}

// handOffOnce is one leadership transfer to the best follower now.
func (n *Node) handOffOnce(deadline <-chan time.Time) error {
	id, addr, ok := n.handOffTarget()
	if !ok {
		return ErrNoSuccessor
	}
	f := n.raft.LeadershipTransferToServer(id, addr)
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	check := time.NewTicker(n.campaignStep())
	defer check.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				return fmt.Errorf("ensemble: leadership hand-off: %w", err)
			}
			return nil
		case <-deadline:
			return ErrHandOffTimeout
		case <-check.C:
			if !n.answering(addr) {
				return errSuccessorSilent
			}
		}
	}
}

// handOffTarget is the voting follower with the longest log among those
// that answer a heartbeat within a campaignStep (asked all at once): a
// follower that stopped (SIGSTOP) still accepts connections, and Raft's
// transfer to it would wait P.
func (n *Node) handOffTarget() (raft.ServerID, raft.ServerAddress, bool) {
	self := raft.ServerID(fmt.Sprint(n.cfg.ID))
	var servers []raft.Server
	for _, s := range n.raft.GetConfiguration().Configuration().Servers {
		if s.Suffrage == raft.Voter && s.ID != self {
			servers = append(servers, s)
		}
	}
	answers := make([]bool, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i] = n.trans.answersWithin(s.Address, n.campaignStep())
		}()
	}
	wg.Wait()
	var id raft.ServerID
	var addr raft.ServerAddress
	var best uint64
	found := false
	for i, s := range servers {
		if !answers[i] {
			continue
		}
		last, _ := n.trans.memberLastLog(s.Address)
		if !found || last > best {
			id, addr, best, found = s.ID, s.Address, last, true
		}
	}
	return id, addr, found
}

// answering reports whether the member at addr answered this leader
// within answerWindow and has not gone since (contact.go).
func (n *Node) answering(addr raft.ServerAddress) bool {
	m := n.trans.contactOf(addr)
	now := n.trans.now()
	at := m.answered.Load()
	return at != 0 && now-at <= int64(n.answerWindow()) && m.closed.Load() < m.sent.Load()
}

// answerWindow is how long a follower that answers goes without
// answering at most: Raft heartbeats every P/10 to P/5, and a
// campaignStep for the round trip on a loaded machine.
func (n *Node) answerWindow() time.Duration {
	return n.electionTimeout()/5 + n.campaignStep()
}
