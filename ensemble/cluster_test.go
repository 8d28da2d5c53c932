package ensemble

import (
	"fmt"
	"net"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/internal/testing/testport"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// faultNet injects partitions between members (the hashicorp/raft
// testing.go Partition idea, over real loopback TCP): a blocked link
// refuses new dials and breaks established connections on their next read
// or write.
type faultNet struct {
	mu      sync.Mutex
	blocked map[[2]int64]bool          // [from, to]
	delay   map[[2]int64]time.Duration // added to every write on a link
	frozen  map[[2]int64]bool          // links that carry nothing until thawed (freeze)
	addrs   map[string]int64           // member address -> id
	conns   []*faultConn
	refused map[[2]int64]int // dials refused on a blocked link [from, to]
}

func newFaultNet() *faultNet {
	return &faultNet{blocked: make(map[[2]int64]bool), delay: make(map[[2]int64]time.Duration), frozen: make(map[[2]int64]bool), addrs: make(map[string]int64)}
}

func (f *faultNet) isBlocked(from, to int64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.blocked[[2]int64{from, to}]
}

// partition cuts every link between group a and group b, both ways.
func (f *faultNet) partition(a, b []int64) {
	f.mu.Lock()
	for _, x := range a {
		for _, y := range b {
			f.blocked[[2]int64{x, y}] = true
			f.blocked[[2]int64{y, x}] = true
		}
	}
	f.mu.Unlock()
	f.dropBlocked()
}

// cut blocks the link from → to alone: from can no longer dial to, and its
// connections to it break; to still reaches from.
func (f *faultNet) cut(from, to int64) {
	f.mu.Lock()
	f.blocked[[2]int64{from, to}] = true
	f.mu.Unlock()
	f.dropBlocked()
}

// dropBlocked closes the dialed connections whose link is blocked.
func (f *faultNet) dropBlocked() {
	f.mu.Lock()
	conns := append([]*faultConn(nil), f.conns...)
	f.mu.Unlock()
	for _, c := range conns {
		if f.isBlocked(c.from, c.to) {
			c.Conn.Close()
		}
	}
}

// slow delays every write between a and b (both ways) by d.
func (f *faultNet) slow(a, b int64, d time.Duration) {
	f.mu.Lock()
	f.delay[[2]int64{a, b}] = d
	f.delay[[2]int64{b, a}] = d
	f.mu.Unlock()
}

func (f *faultNet) linkDelay(from, to int64) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.delay[[2]int64{from, to}]
}

// refusedDials is how many dials from → to the blocked link refused.
func (f *faultNet) refusedDials(from, to int64) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refused[[2]int64{from, to}]
}

func (f *faultNet) heal() {
	f.mu.Lock()
	f.blocked = make(map[[2]int64]bool)
	f.delay = make(map[[2]int64]time.Duration)
	f.frozen = make(map[[2]int64]bool)
	f.mu.Unlock()
}

func (f *faultNet) dialer(from int64) Dialer {
	return func(addr string, timeout time.Duration) (net.Conn, error) {
		f.mu.Lock()
		to := f.addrs[addr]
		f.mu.Unlock()
		if f.isBlocked(from, to) {
			f.mu.Lock()
			if f.refused == nil {
				f.refused = make(map[[2]int64]int)
			}
			f.refused[[2]int64{from, to}]++
			f.mu.Unlock()
			return nil, fmt.Errorf("partitioned %d -> %d", from, to)
		}
		c, err := net.DialTimeout("tcp", addr, timeout)
		if err != nil {
			return nil, err
		}
		fc := &faultConn{Conn: c, net: f, from: from, to: to}
		f.mu.Lock()
		f.conns = append(f.conns, fc)
		f.mu.Unlock()
		return fc, nil
	}
}

// faultConn is a dialed member connection that fails once its link is cut.
type faultConn struct {
	net.Conn
	net      *faultNet
	from, to int64
	// For freeze (quorum_test.go): closed by Close, and the deadlines set.
	closed          atomic.Bool
	readBy, writeBy atomic.Int64
}

func (c *faultConn) Read(b []byte) (int, error) {
	if c.net.isBlocked(c.from, c.to) {
		c.Conn.Close()
		return 0, net.ErrClosed
	}
	n, err := c.Conn.Read(b)
	if herr := c.hold(&c.readBy); herr != nil {
		return 0, herr
	}
	return n, err
}

func (c *faultConn) Write(b []byte) (int, error) {
	if d := c.net.linkDelay(c.from, c.to); d > 0 {
		time.Sleep(d)
	}
	if c.net.isBlocked(c.from, c.to) {
		c.Conn.Close()
		return 0, net.ErrClosed
	}
	if err := c.hold(&c.writeBy); err != nil {
		return 0, err
	}
	return c.Conn.Write(b)
}

// cluster is an in-process ensemble (the rqlite system_test Node idea).
type cluster struct {
	t     *testing.T
	net   *faultNet
	peers []backend.Peer
	dirs  map[int64]string
	nodes map[int64]*Node
	tweak func(*Config)
}

func newCluster(t *testing.T, size int, tweak func(*Config)) *cluster {
	return newClusterWithObservers(t, size, 0, tweak)
}

// newClusterWithObservers starts voters members plus observers non-voting
// ones (the last ids).
func newClusterWithObservers(t *testing.T, voters, observers int, tweak func(*Config)) *cluster {
	t.Helper()
	ids := make([]int64, voters+observers)
	for i := range ids {
		ids[i] = int64(i + 1)
	}
	return newClusterOf(t, ids, voters, tweak)
}

// newClusterOf starts members with the server ids given: the first voters
// vote, the rest observe.
func newClusterOf(t *testing.T, ids []int64, voters int, tweak func(*Config)) *cluster {
	t.Helper()
	return newClusterOn(t, newFaultNet(), ids, voters, tweak)
}

// newClusterOn is newClusterOf on net, whose faults (slow links) may be
// set before the members start and elect.
func newClusterOn(t *testing.T, net *faultNet, ids []int64, voters int, tweak func(*Config)) *cluster {
	t.Helper()
	c := &cluster{t: t, net: net, dirs: map[int64]string{}, nodes: map[int64]*Node{}, tweak: tweak}
	for i, id := range ids {
		addr, err := testport.Addr() // below the ephemeral range: no client takes it meanwhile
		if err != nil {
			t.Fatal(err)
		}
		c.peers = append(c.peers, backend.Peer{ID: id, Addr: addr, Observer: i >= voters})
		c.net.addrs[addr] = id
		c.dirs[id] = t.TempDir()
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, p := range c.peers {
		wg.Add(1)
		go func(id int64) {
			defer wg.Done()
			n := c.open(id)
			mu.Lock()
			c.nodes[id] = n
			mu.Unlock()
		}(p.ID)
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, n := range c.nodes {
			n.Close()
		}
	})
	return c
}

func (c *cluster) open(id int64) *Node {
	cfg := Config{
		// A 2 s election timeout rides out the stalls of a machine busy with
		// other tests (and -race); a dead leader is replaced without it.
		ID: id, DataDir: c.dirs[id], TickTime: 200 * time.Millisecond, ElectionTimeout: 2 * time.Second,
		Peers: c.peers, Dial: c.net.dialer(id),
		JournalSize: 256 << 10, // small: quick to create, and the tests wrap it
	}
	if c.tweak != nil {
		c.tweak(&cfg)
	}
	n, err := Open(cfg)
	if err != nil {
		c.t.Errorf("open member %d: %v", id, err)
		return nil
	}
	return n
}

// leader waits for a leader among the running members.
func (c *cluster) leader() *Node {
	c.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		for _, n := range c.nodes {
			if n != nil && n.IsLeader() {
				return n
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.t.Fatal("no leader")
	return nil
}

func (c *cluster) follower() *Node {
	c.t.Helper()
	l := c.leader()
	for _, n := range c.nodes {
		if n != nil && n != l {
			return n
		}
	}
	c.t.Fatal("no follower")
	return nil
}

func (c *cluster) stop(id int64) {
	c.nodes[id].Close()
	delete(c.nodes, id)
}

func (c *cluster) restart(id int64) { c.nodes[id] = c.open(id) }

// converged waits until every running member has applied at least zxid.
func (c *cluster) converged(zxid int64) {
	c.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for _, n := range c.nodes {
		for n.LastZxid() < zxid {
			if time.Now().After(deadline) {
				c.t.Fatalf("member %d at zxid %d, want %d", n.ID(), n.LastZxid(), zxid)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

func mustPropose(t *testing.T, n *Node, txn *znode.Txn) *znode.Result {
	t.Helper()
	type outcome struct {
		res *znode.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := n.ProposeWait(txn)
		done <- outcome{res, err}
	}()
	var o outcome
	select {
	case o = <-done:
	case <-time.After(time.Minute):
		// Every proposal ends in a result or an error; a wait this long
		// is a liveness bug. Show where everything stands.
		var b strings.Builder
		_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
		t.Fatalf("member %d: proposal unanswered after a minute; goroutines:\n%s", n.ID(), b.String())
	}
	res, err := o.res, o.err
	if err != nil {
		t.Fatalf("member %d: propose: %v", n.ID(), err)
	}
	if res.Err != jute.OK {
		t.Fatalf("member %d: %v", n.ID(), res.Err)
	}
	return res
}

func newSession(id int64, timeoutMs int32) *znode.Txn {
	return &znode.Txn{Type: jute.OpCreateSession, Session: id, Time: time.Now().UnixMilli(), Timeout: timeoutMs, Passwd: make([]byte, 16)}
}

func treeStat(n *Node, path string) (jute.Stat, error) {
	t := n.RLockTree()
	defer n.RUnlockTree()
	return t.Exists(path, nil)
}
