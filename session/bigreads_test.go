package session

import (
	"fmt"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/internal/testing/rawclient"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// treeBuilder builds a tree without a member, for tests to seed or read:
// it applies transactions of session 1 (open from the start) at rising
// zxids.
type treeBuilder struct {
	t    *testing.T
	tree *znode.Tree
	zxid int64
}

func newTreeBuilder(t *testing.T) *treeBuilder {
	b := &treeBuilder{t: t, tree: znode.NewTree(znode.Options{})}
	b.apply(&znode.Txn{Type: jute.OpCreateSession, Timeout: 30000, Passwd: make([]byte, 16)})
	return b
}

// apply applies txn as session 1's, failing the test on any error.
func (b *treeBuilder) apply(txn *znode.Txn) {
	b.t.Helper()
	b.zxid++
	txn.Session, txn.Time = 1, 1
	if r := b.tree.Apply(txn, b.zxid); r.Err != jute.OK {
		b.t.Fatalf("%v: %v", txn.Type, r.Err)
	}
}

// create creates a persistent node.
func (b *treeBuilder) create(p string, data []byte, acl []jute.ACL) {
	b.t.Helper()
	req := jute.CreateRequest{Path: p, Data: data, ACL: acl}
	b.apply(&znode.Txn{Type: jute.OpCreate, Req: jute.Marshal(&req)})
}

// seededBigDir starts a one-member server whose tree holds /big with kids
// children (written straight into a seed snapshot: creating them through
// the log would take most of the test), and reports every wait of the
// FSM for the tree's write lock into applyWaits.
func seededBigDir(t *testing.T, kids int, applyWaits *waitLog) *testServer {
	t.Helper()
	b := newTreeBuilder(t)
	create := func(p string) { b.create(p, []byte("x"), openACL) }
	create("/big")
	for i := range kids {
		create(fmt.Sprintf("/big/child-%08d", i))
	}
	b.apply(&znode.Txn{Type: jute.OpCloseSession})
	cfg := ensemble.Config{DataDir: t.TempDir(), TickTime: 200 * time.Millisecond,
		Metrics: backend.Metrics{ApplyWait: applyWaits.add}}
	if err := ensemble.Seed(cfg, b.tree, uint64(b.zxid)); err != nil {
		t.Fatal(err)
	}
	node, err := ensemble.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := New(Config{TickTime: 200 * time.Millisecond}, node)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		node.Close()
	})
	return &testServer{node: node, srv: srv, addr: ln.Addr().String()}
}

// waitLog collects durations from any goroutine while it is on.
type waitLog struct {
	on   atomic.Bool
	mu   sync.Mutex
	list []time.Duration
}

func (w *waitLog) add(d time.Duration) {
	if !w.on.Load() {
		return
	}
	w.mu.Lock()
	w.list = append(w.list, d)
	w.mu.Unlock()
}

// quantile returns the q-quantile and the maximum of what was collected.
func (w *waitLog) quantile(q float64) (time.Duration, time.Duration, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.list) == 0 {
		return 0, 0, 0
	}
	s := slices.Clone(w.list)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1))], s[len(s)-1], len(s)
}

// TestAuditBigReadsNobodyCollects (issue 37, finding 1): with a node of
// 200,000 children, connections that pipeline getChildren on it, never
// read and then close stalled every other client: each read sorted and
// encoded the whole list while holding the tree's read lock, the FSM's
// write lock waited behind them and new readers behind it, and the reads
// a closed connection still had buffered were all carried out. Now a read
// takes the directory's sorted name index in constant time and the reply
// is encoded by the connection's writer outside the lock, and a closed
// connection's buffered requests are dropped. The FSM's wait for the lock
// (ensemble.Metrics.ApplyWait) stays small throughout, writes from another
// client go on, and the closed connections' requests are not carried out.
func TestAuditBigReadsNobodyCollects(t *testing.T) {
	const (
		kids      = 200_000
		flooders  = 10
		perFloods = 20
	)
	var waits waitLog
	ts := seededBigDir(t, kids, &waits)

	// A prober writes all along: each create needs the FSM's write lock.
	prober := rawclient.Dial(t, ts.addr)
	prober.Connect(false)
	var probeLat waitLog
	probeLat.on.Store(true)
	stopProbe := make(chan struct{})
	probeDone := make(chan struct{})
	go func() {
		defer close(probeDone)
		for i := int32(1); ; i++ {
			select {
			case <-stopProbe:
				return
			default:
			}
			start := time.Now()
			prober.Request(i, jute.OpCreate, &jute.CreateRequest{Path: fmt.Sprintf("/probe-%d", i), ACL: openACL})
			if h := prober.Reply(nil); h.Err != jute.OK {
				t.Errorf("probe create: %+v", h)
				return
			}
			probeLat.add(time.Since(start))
			time.Sleep(5 * time.Millisecond)
		}
	}()

	waits.on.Store(true)
	before := ts.srv.Stats().PacketsReceived
	flood := make([]*rawclient.Client, flooders)
	for i := range flood {
		c := rawclient.Dial(t, ts.addr)
		c.Connect(false)
		for x := int32(1); x <= perFloods; x++ {
			c.Request(x, jute.OpGetChildren, &jute.PathWatchRequest{Path: "/big"})
		}
		flood[i] = c
	}
	time.Sleep(2 * time.Second)
	for _, c := range flood {
		c.Conn.Close()
	}
	time.Sleep(2 * time.Second)
	close(stopProbe)
	<-probeDone
	waits.on.Store(false)

	p99, worst, n := waits.quantile(0.99)
	pp50, pworst, pn := probeLat.quantile(0.5)
	t.Logf("FSM lock waits: %d, p99 %v, max %v; probe creates: %d, p50 %v, max %v", n, p99, worst, pn, pp50, pworst)
	// The old code's waits were each a reader's sort of 200,000 names
	// (tens of milliseconds at best, seconds on a busy machine).
	if p99 > 20*time.Millisecond || worst > time.Second {
		t.Errorf("the FSM waited for the tree lock up to %v (p99 %v): readers held it too long", worst, p99)
	}
	// Each flooding connection reads its first request, answers it and
	// pauses on its backlog; the rest it had buffered must not be carried
	// out once it is gone.
	read := ts.srv.Stats().PacketsReceived - before
	if max := int64(flooders * 3); read-int64(pn)-flooders > max { // handshakes are not packets
		t.Errorf("the server took %d requests from the flooding connections, want at most %d", read-int64(pn)-flooders, max)
	}
}

// lockCounter is a Backend that counts the read-lock holds taken on it.
type lockCounter struct {
	*ensemble.Node
	holds atomic.Int64
}

func (l *lockCounter) RLockTree() *znode.Tree {
	l.holds.Add(1)
	return l.Node.RLockTree()
}

// TestLongReadsLetTheLockGo: a SetWatches of many paths and a multiRead of
// many ops are the reads whose work grows with their own size (up to
// jute.maxbuffer). Each lets the tree's read lock go every relockEvery
// paths or ops, so a waiting write goes first; the answers are whole.
func TestLongReadsLetTheLockGo(t *testing.T) {
	be := &lockCounter{Node: standaloneNode(t)}
	_, addr := serveOn(t, be)

	c := rawclient.Dial(t, addr)
	c.Connect(false)
	c.Request(1, jute.OpCreate, &jute.CreateRequest{Path: "/w", ACL: openACL})
	if h := c.Reply(nil); h.Err != jute.OK {
		t.Fatal(h)
	}
	const paths = 5 * relockEvery
	sw := &jute.SetWatches{RelativeZxid: 1 << 40}
	for i := range paths {
		sw.ExistWatches = append(sw.ExistWatches, fmt.Sprintf("/w/absent-%d", i))
	}
	sw.DataWatches = []string{"/w"}
	before := be.holds.Load()
	c.Request(jute.XidSetWatches, jute.OpSetWatches, sw)
	if h := c.Reply(nil); h.Err != jute.OK {
		t.Fatalf("setWatches: %+v", h)
	}
	if got := be.holds.Load() - before; got < paths/relockEvery {
		t.Errorf("a SetWatches of %d paths took the read lock %d times, want at least %d", paths+1, got, paths/relockEvery)
	}
	// Every watch was registered: creating one of the paths fires it.
	c.Request(2, jute.OpCreate, &jute.CreateRequest{Path: fmt.Sprintf("/w/absent-%d", paths-1), ACL: openACL})
	var gotEvent, gotReply bool
	for !gotEvent || !gotReply {
		r := jute.NewReader(c.Frame())
		var h jute.ReplyHeader
		var ev jute.WatcherEvent
		if h.Decode(r) != nil {
			t.Fatal("bad reply header")
		}
		switch {
		case h.Xid == jute.XidNotification && ev.Decode(r) == nil && ev.Type == jute.EventNodeCreated:
			gotEvent = true
		case h.Xid == 2:
			gotReply = true
		}
	}

	mr := &jute.MultiRequest{}
	for range paths {
		mr.Ops = append(mr.Ops, jute.MultiOp{Type: jute.OpGetData, Req: &jute.PathWatchRequest{Path: "/w"}})
	}
	before = be.holds.Load()
	c.Request(3, jute.OpMultiRead, mr)
	var resp jute.MultiResponse
	if h := c.Reply(&resp); h.Err != jute.OK || len(resp.Results) != paths {
		t.Fatalf("multiRead: %+v, %d results", h, len(resp.Results))
	}
	if got := be.holds.Load() - before; got < paths/relockEvery {
		t.Errorf("a multiRead of %d ops took the read lock %d times, want at least %d", paths, got, paths/relockEvery)
	}
}
