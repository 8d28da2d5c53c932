package ensemble

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkraft/zkraft/znode"
)

// slowLeaderNews delays the leadership notifications members' expiry loops
// hear (Config.leaderNotify) by an adjustable delay, and records when each
// member's loop was told it leads.
type slowLeaderNews struct {
	delay atomic.Int64 // time.Duration
	stop  chan struct{}

	mu   sync.Mutex
	told map[int64]time.Time // member -> when its loop was last told "leader"
}

func newSlowLeaderNews(t *testing.T) *slowLeaderNews {
	s := &slowLeaderNews{stop: make(chan struct{}), told: map[int64]time.Time{}}
	t.Cleanup(func() { close(s.stop) })
	return s
}

// wrap is the Config.leaderNotify of member id.
func (s *slowLeaderNews) wrap(id int64) func(<-chan bool) <-chan bool {
	return func(in <-chan bool) <-chan bool {
		out := make(chan bool)
		go func() {
			for {
				var v bool
				select {
				case v = <-in:
				case <-s.stop:
					return
				}
				time.Sleep(time.Duration(s.delay.Load()))
				if v { // before the loop hears it, so before its reset
					s.mu.Lock()
					s.told[id] = time.Now()
					s.mu.Unlock()
				}
				select {
				case out <- v:
				case <-s.stop:
					return
				}
			}
		}()
		return out
	}
}

// toldAt returns when member id's loop last heard it leads.
func (s *slowLeaderNews) toldAt(id int64) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.told[id]
	return at, ok
}

func sessionExists(n *Node, id int64) bool {
	tr := n.RLockTree()
	defer n.RUnlockTree()
	_, ok := tr.Session(id)
	return ok
}

// TestClusterNewLeaderGrantsFreshTimeout: a session kept alive on the
// leader alone is past its deadline in the followers' tables; when the
// leader dies, the new one expires it only after a full timeout from the
// moment its expiry loop hears it leads. Raft reports the member Leader
// before it says so on LeaderCh (delayed here), and a tick in between
// expired the session from the stale table (CI: "0 sessions resumed, 4
// expired" after a leader kill).
func TestClusterNewLeaderGrantsFreshTimeout(t *testing.T) {
	const session, timeout = 21, 2 * time.Second
	news := newSlowLeaderNews(t)
	c := newCluster(t, 3, func(cfg *Config) { cfg.leaderNotify = news.wrap(cfg.ID) })
	old := c.leader()
	mustPropose(t, old, newSession(session, int32(timeout.Milliseconds())))
	for end := time.Now().Add(timeout + time.Second); time.Now().Before(end); {
		old.TouchSession(session) // on the leader only: the followers' deadlines pass
		time.Sleep(100 * time.Millisecond)
	}
	if !sessionExists(old, session) {
		t.Fatal("the session expired while touched on the leader")
	}

	const delay = time.Second
	news.delay.Store(int64(delay))
	c.stop(old.ID())
	leader := c.leader()
	var told time.Time
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if at, ok := news.toldAt(leader.ID()); ok {
			told = at
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("member %d leads but its expiry loop was not told", leader.ID())
		}
	}
	// The new leader has been Leader for the delay, ticks included, but
	// its table was reset only now.
	time.Sleep(300 * time.Millisecond)
	if !sessionExists(leader, session) {
		t.Fatalf("the new leader expired the session within %v of leading", delay)
	}
	// Untouched, it expires a full timeout after the reset, not before.
	for deadline := told.Add(timeout + 10*time.Second); sessionExists(leader, session); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the untouched session never expired")
		}
	}
	if gone := time.Since(told); gone < timeout {
		t.Fatalf("the session expired %v after the new leader's reset, before its %v timeout", gone, timeout)
	}
}

// TestResetKeepsSessionsChangedMeanwhile: a createSession or closeSession
// the FSM applies while a new leader rebuilds its table from the tree's
// sessions (after the copy, before the swap) is in the new table: a
// session created then is tracked, and so expires once its client is
// gone; one closed then is not.
func TestResetKeepsSessionsChangedMeanwhile(t *testing.T) {
	e := newExpiry()
	e.add(1, 10_000)
	e.add(2, 10_000)
	e.reset(func() []znode.SessionInfo {
		copied := []znode.SessionInfo{{ID: 1, Timeout: 10_000}, {ID: 2, Timeout: 10_000}}
		// Applied after the copy, before the swap:
		e.add(3, 1)
		e.remove(2)
		return copied
	})
	e.mu.RLock()
	_, has1 := e.m[1]
	_, has2 := e.m[2]
	_, has3 := e.m[3]
	journaling := e.journaling
	e.mu.RUnlock()
	if !has1 || has2 || !has3 || journaling {
		t.Fatalf("after the reset: 1 %v, 2 %v, 3 %v (want true, false, true); journaling %v", has1, has2, has3, journaling)
	}
	time.Sleep(5 * time.Millisecond)
	if got := e.expired(time.Now(), time.Minute); len(got) != 1 || got[0].id != 3 {
		t.Fatalf("expired %+v, want session 3 alone", got)
	}
	e.add(4, 1) // after the reset: not journaled
	if e.journal != nil {
		t.Fatalf("journal %+v after the reset", e.journal)
	}
}
