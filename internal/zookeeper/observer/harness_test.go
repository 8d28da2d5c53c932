package observer

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/internal/testing/zkleader"
	"github.com/zkraft/zkraft/internal/zookeeper/learner"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// The tests here run a Backend against a scripted ZooKeeper leader
// (internal/testing/zkleader) on a loopback port: the leader's side of
// every exchange is the test's, so each request, answer, ping and lost
// connection happens when the test says, with no JVM.

// observerID is the Backend's server id, and the top byte of the
// sessions its clients create (ZooKeeper's and session's allocation).
const observerID = 5

// sessionA and sessionB are sessions of this server's clients.
const (
	sessionA = int64(observerID)<<56 | 1
	sessionB = int64(observerID)<<56 | 2
)

// wait bounds a test's wait for the Backend.
const wait = 10 * time.Second

// fixture is a Backend following a scripted leader, and the leader's
// side of the connection.
type fixture struct {
	t   *testing.T
	ldr *zkleader.Leader
	b   *Backend
	c   *zkleader.Conn // the connection followed now
	// seeded are the transactions the leader held before the first
	// sync: /app ("v1") and /app/a ("a").
	seeded []zkleader.Txn
	// lost receives a value each time the Backend reports a lost
	// leader (Run's onLost).
	lost chan struct{}
	// ran receives Run's result.
	ran chan error
}

// start runs a Backend following a new scripted leader until the test
// ends, and syncs it by DIFF with the leader's seed. cfgs adjust the
// learner's configuration.
func start(t *testing.T, cfgs ...func(*learner.Config)) *fixture {
	t.Helper()
	ldr := zkleader.Listen(t)
	fx := &fixture{t: t, ldr: ldr, lost: make(chan struct{}, 16), ran: make(chan error, 1)}
	fx.seeded = []zkleader.Txn{
		ldr.Log(zkleader.Txn{Type: jute.OpCreate, Record: zkleader.CreateTxn("/app", []byte("v1"), false)}),
		ldr.Log(zkleader.Txn{Type: jute.OpCreate, Record: zkleader.CreateTxn("/app/a", []byte("a"), false)}),
	}
	cfg := learner.Config{ID: observerID, Servers: []string{ldr.Addr()}, Retry: 5 * time.Millisecond, Logger: zaptest.NewLogger(t)}
	for _, f := range cfgs {
		f(&cfg)
	}
	b, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	fx.b = b
	fx.run()
	fx.sync()
	return fx
}

// run runs the Backend until the test ends.
func (fx *fixture) run() {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		fx.ran <- fx.b.Run(ctx, func() {
			select {
			case fx.lost <- struct{}{}:
			default:
			}
		})
	}()
	fx.t.Cleanup(func() {
		cancel()
		select {
		case <-fx.ran:
		case <-time.After(wait):
			fx.t.Error("Run did not return")
		}
	})
}

// sync takes the learner's next connection, syncs it by DIFF and waits
// until the Backend serves (the learner is up to date once it has
// acknowledged UPTODATE, a moment after the leader reads the ACK).
func (fx *fixture) sync() zkleader.Hello {
	fx.t.Helper()
	c, hello := fx.ldr.AcceptSynced()
	fx.c = c
	fx.waitFor(func(st learner.Status) bool { return st.Synced })
	return hello
}

// waitFor waits until cond holds for the learner's status.
func (fx *fixture) waitFor(cond func(learner.Status) bool) learner.Status {
	fx.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	st, err := fx.b.Learner().WaitFor(ctx, cond)
	if err != nil {
		fx.t.Fatalf("status %+v: %v", st, err)
	}
	return st
}

// applied waits until the learner has applied the transaction of zxid.
func (fx *fixture) applied(zxid int64) {
	fx.t.Helper()
	fx.waitFor(func(st learner.Status) bool { return st.LastZxid >= zxid })
}

// read calls fn with the followed tree, read-locked.
func (fx *fixture) read(fn func(*znode.Tree)) {
	t := fx.b.RLockTree()
	defer fx.b.RUnlockTree()
	fn(t)
}

// data is path's data and Stat in the followed tree.
func (fx *fixture) data(path string) ([]byte, jute.Stat, error) {
	var (
		d   []byte
		st  jute.Stat
		err error
	)
	fx.read(func(t *znode.Tree) { d, st, err = t.GetData(path, superIds) })
	return d, st, err
}

// superIds read every node.
var superIds = []jute.Id{{Scheme: "super", ID: "test"}}

// noneForwarded checks that the learner sent the leader nothing since
// the last exchange: a PING's reply is the next thing it sends, as its
// requests and replies share the connection in order.
func (fx *fixture) noneForwarded() map[int64]int32 {
	fx.t.Helper()
	return fx.c.Ping()
}

// outcome is what a waiter was told.
type outcome struct {
	res *znode.Result
	err error
	// seen is what the waiter's inspect found in the tree, locked, when
	// Applied ran.
	seen any
}

// waiter is a client request's backend.Waiter, as package session's:
// it names its session and may be abandoned.
type waiter struct {
	session   int64
	abandoned bool
	// inspect, if set, runs in Applied with the tree as it is then.
	inspect func(res *znode.Result, t *znode.Tree) any
	done    chan outcome
}

func newWaiter(session int64) *waiter { return &waiter{session: session, done: make(chan outcome, 2)} }

func (w *waiter) Applied(res *znode.Result, t *znode.Tree) {
	o := outcome{res: res}
	if w.inspect != nil {
		o.seen = w.inspect(res, t)
	}
	w.done <- o
}
func (w *waiter) Failed(err error) { w.done <- outcome{err: err} }
func (w *waiter) Session() int64   { return w.session }
func (w *waiter) Abandoned() bool  { return w.abandoned }

// outcome waits for w's outcome, which must be its only one.
func (w *waiter) outcome(t *testing.T) outcome {
	t.Helper()
	var o outcome
	select {
	case o = <-w.done:
	case <-time.After(wait):
		t.Fatal("the request was never answered")
	}
	select {
	case again := <-w.done:
		t.Fatalf("answered twice: %+v, then %+v", o, again)
	default:
	}
	return o
}

// result waits for w's outcome, which must be Applied.
func (w *waiter) result(t *testing.T) *znode.Result {
	t.Helper()
	o := w.outcome(t)
	if o.err != nil {
		t.Fatalf("the request failed: %v", o.err)
	}
	return o.res
}

// pending checks that w has no outcome yet.
func (w *waiter) pending(t *testing.T) {
	t.Helper()
	select {
	case o := <-w.done:
		t.Fatalf("answered already: %+v", o)
	default:
	}
}

// write is a client's write of type op with request req, as session
// hands it to the Backend.
func write(session int64, op jute.Op, req jute.Record) *znode.Txn {
	return &znode.Txn{Type: op, Session: session, Time: time.Now().UnixMilli(), Req: jute.Marshal(req)}
}

// create is a client's create of path.
func create(session int64, path, data string) *znode.Txn {
	return write(session, jute.OpCreate, &jute.CreateRequest{Path: path, Data: []byte(data), ACL: openACL})
}

var openACL = []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}

// createSession opens session id with timeout through the Backend, the
// leader answering it, as session's handshake does.
func (fx *fixture) createSession(id int64, timeout int32) {
	fx.t.Helper()
	w := newWaiter(0)
	fx.b.Propose(&znode.Txn{Type: jute.OpCreateSession, Session: id, Timeout: timeout, Passwd: make([]byte, 16)}, w)
	f := fx.c.ExpectRequest()
	fx.c.Answer(f, jute.OpCreateSession, zkleader.CreateSessionTxn(timeout))
	if res := w.result(fx.t); res.Err != jute.OK {
		fx.t.Fatalf("createSession: %v", res.Err)
	}
}

// closedSessions records the sessions the SessionClosed hook was told
// of, and whether the followed tree was locked then.
type closedSessions struct {
	b  *Backend
	mu sync.Mutex
	// locked is, for each session closed, whether the tree was locked
	// when the hook ran.
	locked map[int64]bool
	ch     chan int64
}

func hookClosed(b *Backend) *closedSessions {
	c := &closedSessions{b: b, locked: make(map[int64]bool), ch: make(chan int64, 16)}
	b.SetHooks(backend.Hooks{SessionClosed: c.closed})
	return c
}

func (c *closedSessions) closed(id int64) {
	locked := treeLocked(c.b)
	c.mu.Lock()
	c.locked[id] = locked
	c.mu.Unlock()
	c.ch <- id
}

// next waits for the next session closed.
func (c *closedSessions) next(t *testing.T) int64 {
	t.Helper()
	select {
	case id := <-c.ch:
		return id
	case <-time.After(wait):
		t.Fatal("no session was closed")
		return 0
	}
}

// treeLocked reports whether the followed tree is locked for writing
// now (by the learner applying a transaction): a reader that cannot take
// it within a moment finds it so. Its answer false is sure; true may
// also come of a reader slow to start, so a test that wants true cannot
// fail wrongly, only miss a regression now and then.
func treeLocked(b *Backend) bool {
	got := make(chan struct{})
	go func() {
		b.RLockTree()
		b.RUnlockTree()
		close(got)
	}()
	select {
	case <-got:
		return false
	case <-time.After(50 * time.Millisecond):
		return true
	}
}
