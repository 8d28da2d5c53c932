package ensemble

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// expiry tracks session liveness. Every member records touches; only the
// leader acts on them, proposing a closeSession for each session whose
// deadline passed (the shape of Consul's session TTL timers). A member that
// becomes leader grants every session a fresh timeout before it expires
// any (expireSessions).
type expiry struct {
	mu sync.RWMutex
	m  map[int64]*liveness
	// While a reset builds its table (resetMu held), add and remove are
	// also journaled, to be replayed onto the new table before it goes
	// in: the sessions are copied from the tree under its read lock, and
	// the FSM may apply a createSession or closeSession before the swap.
	resetMu    sync.Mutex
	journaling bool
	journal    []sessionChange
}

// sessionChange is an add or a remove made during a reset.
type sessionChange struct {
	id      int64
	timeout time.Duration
	removed bool
}

// liveness is one session's expiry state; its fields are atomics so that
// touches (on every request) take only the map's read lock.
type liveness struct {
	timeout  time.Duration
	deadline atomic.Int64 // unix nanoseconds
	closing  atomic.Int64 // unix nanoseconds of the pending close proposal, 0 if none
}

func newExpiry() *expiry { return &expiry{m: make(map[int64]*liveness)} }

// newLiveness is a session's state with a full timeout from now.
func newLiveness(timeout time.Duration, now time.Time) *liveness {
	l := &liveness{timeout: timeout}
	l.deadline.Store(now.Add(timeout).UnixNano())
	return l
}

func (e *expiry) add(id int64, timeoutMs int32) {
	timeout := time.Duration(timeoutMs) * time.Millisecond
	l := newLiveness(timeout, time.Now())
	e.mu.Lock()
	e.m[id] = l
	if e.journaling {
		e.journal = append(e.journal, sessionChange{id: id, timeout: timeout})
	}
	e.mu.Unlock()
}

func (e *expiry) remove(id int64) {
	e.mu.Lock()
	delete(e.m, id)
	if e.journaling {
		e.journal = append(e.journal, sessionChange{id: id, removed: true})
	}
	e.mu.Unlock()
}

func (e *expiry) touch(id int64) {
	e.mu.RLock()
	l := e.m[id]
	e.mu.RUnlock()
	if l != nil {
		l.deadline.Store(time.Now().Add(l.timeout).UnixNano())
	}
}

// reset replaces the table with the sessions that sessions returns, each
// with a full timeout from now. Sessions added or removed from the moment
// it starts are replayed onto the new table, in order, before the swap:
// a session created meanwhile would otherwise be missing from the leader's
// table and never expire (its ephemerals held for good by a dead client).
// Adds and removes are set and delete by id, so replaying those that the
// copy already reflects changes nothing.
func (e *expiry) reset(sessions func() []znode.SessionInfo) {
	e.resetMu.Lock()
	defer e.resetMu.Unlock()
	e.mu.Lock()
	e.journaling, e.journal = true, nil
	e.mu.Unlock()
	list := sessions()
	m := make(map[int64]*liveness, len(list))
	now := time.Now()
	for _, s := range list {
		m[s.ID] = newLiveness(time.Duration(s.Timeout)*time.Millisecond, now)
	}
	e.mu.Lock()
	for _, c := range e.journal {
		if c.removed {
			delete(m, c.id)
		} else {
			m[c.id] = newLiveness(c.timeout, now)
		}
	}
	e.m, e.journaling, e.journal = m, false, nil
	e.mu.Unlock()
}

// expiredSession is a session past its deadline, due a close proposal.
type expiredSession struct {
	id      int64
	timeout time.Duration
	retry   bool // an earlier close proposal was not applied in time
}

// expired returns the sessions past their deadline that have no close
// proposal in flight (or whose proposal is older than retry), marking them.
func (e *expiry) expired(now time.Time, retry time.Duration) []expiredSession {
	var out []expiredSession
	nowNs := now.UnixNano()
	e.mu.RLock()
	defer e.mu.RUnlock()
	for id, l := range e.m {
		if l.deadline.Load() > nowNs {
			continue
		}
		c := l.closing.Load()
		if c != 0 && nowNs-c < int64(retry) {
			continue
		}
		l.closing.Store(nowNs)
		out = append(out, expiredSession{id: id, timeout: l.timeout, retry: c != 0})
	}
	return out
}

// expireSessions is the leader's expiry loop. It acts on its ticks only
// in a term whose leadership it has itself heard of on Raft's leader
// channel and reset the table for: Raft reports the member Leader
// (IsLeader) before it sends that notification, and until the reset the
// table holds a follower's deadlines, refreshed only by its own clients'
// touches, so the sessions of the old leader's clients would look long
// expired. The channel keeps only its latest value, so a leadership lost
// and won again before the loop hears of the loss is told apart by its
// term.
func (n *Node) expireSessions() {
	defer n.wg.Done()
	tick := time.NewTicker(n.halfTick())
	defer tick.Stop()
	leaderCh := n.raft.LeaderCh()
	if n.cfg.leaderNotify != nil {
		leaderCh = n.cfg.leaderNotify(leaderCh)
	}
	var resetTerm uint64 // the term the table was last reset in as leader; 0: none
	for {
		select {
		case <-n.done:
			return
		case isLeader := <-leaderCh:
			resetTerm = 0
			if isLeader {
				resetTerm = n.raft.CurrentTerm()
				n.tracker.reset(n.sessionsSnapshot)
				n.writeInitialConfig()
			}
		case now := <-tick.C:
			if !n.IsLeader() || n.raft.CurrentTerm() != resetTerm {
				continue // not leader, or leader in a term whose table is not reset yet
			}
			for _, s := range n.tracker.expired(now, 4*n.cfg.TickTime) {
				// One line per session, on the leader that expires it
				// (ZooKeeper's "Expiring session 0x..., timeout of
				// ...ms exceeded"); a retried close only at debug level.
				level := zap.InfoLevel
				if s.retry {
					level = zap.DebugLevel
				}
				n.log.Log(level, "session expired", zap.String("session", "0x"+strconv.FormatUint(uint64(s.id), 16)),
					zap.Int64("timeoutMs", s.timeout.Milliseconds()), zap.Bool("retry", s.retry))
				n.Propose(&znode.Txn{Type: jute.OpCloseSession, Session: s.id, Time: now.UnixMilli()}, nil)
			}
		}
	}
}

// halfTick is the period of the member's session bookkeeping loops (expiry
// checks, touch reports): half a tick, at least 20ms.
func (n *Node) halfTick() time.Duration {
	if d := n.cfg.TickTime / 2; d > 20*time.Millisecond {
		return d
	}
	return 20 * time.Millisecond
}
