package ensemble

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// freeze makes every link between groups a and b, both ways, carry
// nothing until heal: dials succeed and writes and reads wait, up to
// their deadlines, as with a member stopped by SIGSTOP (its kernel still
// accepts connections and buffers what is sent to it), unlike partition,
// which refuses dials and breaks connections.
func (f *faultNet) freeze(a, b []int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, x := range a {
		for _, y := range b {
			f.frozen[[2]int64{x, y}] = true
			f.frozen[[2]int64{y, x}] = true
		}
	}
}

func (f *faultNet) isFrozen(from, to int64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.frozen[[2]int64{from, to}]
}

// hold waits while the connection's link is frozen, until it is thawed,
// the connection closed, or the deadline in by passes.
func (c *faultConn) hold(by *atomic.Int64) error {
	for c.net.isFrozen(c.from, c.to) {
		if c.closed.Load() {
			return net.ErrClosed
		}
		if d := by.Load(); d != 0 && time.Now().UnixNano() > d {
			return fmt.Errorf("frozen link %d -> %d: %w", c.from, c.to, os.ErrDeadlineExceeded)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return nil
}

func (c *faultConn) Close() error {
	c.closed.Store(true)
	return c.Conn.Close()
}

func deadlineNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func (c *faultConn) SetDeadline(t time.Time) error {
	c.readBy.Store(deadlineNanos(t))
	c.writeBy.Store(deadlineNanos(t))
	return c.Conn.SetDeadline(t)
}

func (c *faultConn) SetReadDeadline(t time.Time) error {
	c.readBy.Store(deadlineNanos(t))
	return c.Conn.SetReadDeadline(t)
}

func (c *faultConn) SetWriteDeadline(t time.Time) error {
	c.writeBy.Store(deadlineNanos(t))
	return c.Conn.SetWriteDeadline(t)
}

// watchQuorumLost installs a QuorumLost hook on n that reports when it
// is called.
func watchQuorumLost(n *Node) <-chan time.Time {
	ch := make(chan time.Time, 16)
	n.SetHooks(backend.Hooks{QuorumLost: func() { ch <- time.Now() }})
	return ch
}

// waitFor polls cond until it holds, failing after limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// others are the ids of the running members other than n.
func (c *cluster) others(n *Node) []int64 {
	var ids []int64
	for id, m := range c.nodes {
		if m != n {
			ids = append(ids, id)
		}
	}
	return ids
}

// restartAll restarts ids together (each Open waits for a leader, which
// may take more than one of them).
func (c *cluster) restartAll(ids []int64) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := c.open(id)
			mu.Lock()
			c.nodes[id] = n
			mu.Unlock()
		}()
	}
	wg.Wait()
}

// settled waits until every running member has a quorum, one of them
// leads, and a write through it reaches all of them.
func (c *cluster) settled(limit time.Duration) {
	c.t.Helper()
	waitFor(c.t, limit, "every member with a quorum", func() bool {
		for _, n := range c.nodes {
			if n == nil || !n.HasQuorum() {
				return false
			}
		}
		return true
	})
	res := mustPropose(c.t, c.leader(), newSession(time.Now().UnixNano(), 30000))
	c.converged(res.Zxid)
}

func setDataTxn(session int64, path, data string) *znode.Txn {
	req := jute.SetDataRequest{Path: path, Data: []byte(data), Version: -1}
	return &znode.Txn{Type: jute.OpSetData, Session: session, Time: time.Now().UnixMilli(), Req: jute.Marshal(&req)}
}

// TestLeaderStopsLeadingAtOnceWhenFollowersStop: a leader whose followers'
// processes end (their connections close, their ports refuse) stops
// leading at once, not after the lease P (10 s here, as with the usual
// zoo.cfg), and leads or follows again once they are back.
func TestLeaderStopsLeadingAtOnceWhenFollowersStop(t *testing.T) {
	c := newCluster(t, 3, func(cfg *Config) { cfg.ElectionTimeout = 10 * time.Second })
	l := c.leader()
	lost := watchQuorumLost(l)
	mustPropose(t, l, newSession(1, 30000))
	followers := c.others(l)
	for _, id := range followers {
		c.stop(id)
	}
	stopped := time.Now()
	waitFor(t, 2*time.Second, "the leader to stop leading", func() bool { return !l.HasQuorum() && !l.IsLeader() })
	t.Logf("stopped leading %v after its followers stopped", time.Since(stopped).Round(time.Millisecond))
	select {
	case <-lost:
	default:
		t.Fatal("QuorumLost was not called")
	}
	if m := l.Mode(); m == "leader" {
		t.Fatalf("mode %q", m)
	}
	c.restartAll(followers)
	c.settled(40 * time.Second)
}

// TestLeaderStopsLeadingWithinLeaseWhenFollowersFallSilent: a leader whose
// followers stop answering (SIGSTOP, or a partition that drops packets)
// stops serving within P of their silence, before the followers can have
// elected another leader and changed anything: the new leader's first
// write commits after the old one stopped. Once they are heard again, it
// follows the new leader.
func TestLeaderStopsLeadingWithinLeaseWhenFollowersFallSilent(t *testing.T) {
	c := newCluster(t, 3, nil) // P = 2 s
	l := c.leader()
	lost := watchQuorumLost(l)
	mustPropose(t, l, newSession(1, 30000))
	mustPropose(t, l, createTxn(1, "/a", 0, time.Now().UnixMilli()))
	followers := c.others(l)
	p := l.electionTimeout()
	silent := time.Now()
	c.net.freeze([]int64{l.ID()}, followers)

	time.Sleep(time.Until(silent.Add(p)))
	if l.HasQuorum() {
		t.Fatalf("the leader has a quorum %v after its followers fell silent", p)
	}
	var lostAt time.Time
	select {
	case lostAt = <-lost:
	case <-time.After(time.Second):
		t.Fatal("QuorumLost was not called")
	}
	t.Logf("stopped serving %v after its followers fell silent", lostAt.Sub(silent).Round(time.Millisecond))
	waitFor(t, time.Second, "the leader to step down", func() bool { return !l.IsLeader() })

	// The followers elect one of them and change /a.
	var nl *Node
	waitFor(t, 15*time.Second, "a leader among the followers", func() bool {
		for _, id := range followers {
			if c.nodes[id].IsLeader() {
				nl = c.nodes[id]
				return true
			}
		}
		return false
	})
	res := mustPropose(t, nl, setDataTxn(1, "/a", "new"))
	if committed := time.Now(); !lostAt.Before(committed) {
		t.Fatalf("the old leader stopped serving at %v, after the new leader's write committed at %v", lostAt, committed)
	}
	if l.HasQuorum() {
		t.Fatal("the old leader has a quorum again while cut off")
	}

	c.net.heal()
	c.converged(res.Zxid)
	c.settled(30 * time.Second)
	tree := l.RLockTree()
	data, _, err := tree.GetData("/a", nil)
	l.RUnlockTree()
	if err != nil || string(data) != "new" {
		t.Fatalf("old leader reads /a = %q, %v; want new", data, err)
	}
}

// TestLeaderWithoutFollowersStopsAtOnce: a leader whose followers fell
// silent hands leadership to nobody and closes within a couple of
// seconds; the hand-off once waited for Raft's transfer timeout (P, 10 s
// here), and its Close for the heartbeats stuck on them.
func TestLeaderWithoutFollowersStopsAtOnce(t *testing.T) {
	c := newCluster(t, 3, func(cfg *Config) { cfg.ElectionTimeout = 10 * time.Second })
	l := c.leader()
	mustPropose(t, l, newSession(1, 30000))
	c.net.freeze([]int64{l.ID()}, c.others(l))
	time.Sleep(300 * time.Millisecond) // heartbeats are on their way to the silent followers
	start := time.Now()
	err := l.HandOff(40 * time.Second)
	handOff := time.Since(start)
	if !errors.Is(err, ErrNoSuccessor) {
		t.Errorf("hand-off: %v, want ErrNoSuccessor", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	delete(c.nodes, l.ID())
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("hand-off and close took %v (hand-off %v)", took, handOff)
	}
	c.net.heal()
}

// TestSteppedDownLeaderClosesAtOnce: a leader whose followers fell silent
// stops leading and campaigns; its vote requests wait on the silent
// members' handshakes (up to 10 s). Close breaks them and returns at once.
func TestSteppedDownLeaderClosesAtOnce(t *testing.T) {
	c := newCluster(t, 3, nil) // P = 2 s
	l := c.leader()
	c.net.freeze([]int64{l.ID()}, c.others(l))
	waitFor(t, 5*time.Second, "the leader to step down", func() bool { return !l.IsLeader() })
	time.Sleep(300 * time.Millisecond) // its vote requests are on their way
	start := time.Now()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	delete(c.nodes, l.ID())
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("close took %v", took)
	}
	c.net.heal()
}
