package observer

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/zkleader"
	"github.com/zkraft/zkraft/internal/zookeeper/learner"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// TestReadsFollowTheLeader: reads come from the followed tree, which
// holds ZooKeeper's data and Stats at ZooKeeper's zxids and times, from
// the sync and then from the stream.
func TestReadsFollowTheLeader(t *testing.T) {
	fx := start(t)
	app := fx.seeded[0]
	data, st, err := fx.data("/app")
	if err != nil || string(data) != "v1" || st.Czxid != app.Zxid || st.Mzxid != app.Zxid || st.Ctime != app.Time || st.NumChildren != 1 {
		t.Fatalf("/app after the sync: %q %+v %v, want v1 created at %#x, %d", data, st, err, app.Zxid, app.Time)
	}
	if !fx.b.HasQuorum() || fx.b.LastZxid() != fx.ldr.LastZxid() {
		t.Fatalf("serving %v at %#x, want serving at the leader's %#x", fx.b.HasQuorum(), fx.b.LastZxid(), fx.ldr.LastZxid())
	}
	set := fx.c.Commit(zkleader.Txn{Session: 1<<56 | 1, Cxid: 4, Type: jute.OpSetData, Record: zkleader.SetDataTxn("/app", []byte("v2"), 1)})
	fx.applied(set.Zxid)
	data, st, _ = fx.data("/app")
	if string(data) != "v2" || st.Version != 1 || st.Mzxid != set.Zxid || st.Mtime != set.Time || st.Czxid != app.Zxid {
		t.Errorf("/app after a streamed setData: %q %+v", data, st)
	}
	copied, err := fx.b.CopyTree()
	if err != nil {
		t.Fatal(err)
	}
	if d, _, err := copied.GetData("/app", superIds); err != nil || string(d) != "v2" {
		t.Errorf("CopyTree's /app: %q %v", d, err)
	}
}

// notification is one watch notification.
type notification struct {
	path   string
	typ    jute.EventType
	zxid   int64
	locked bool // the followed tree was locked for writing then
}

// recorder is a client connection's watches.Watcher.
type recorder struct {
	b  *Backend
	mu sync.Mutex
	// got are the notifications, in order.
	got []notification
}

func (r *recorder) Notify(path string, typ jute.EventType, zxid int64) {
	locked := treeLocked(r.b)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, notification{path, typ, zxid, locked})
}

func (r *recorder) Ids() []jute.Id { return nil }

func (r *recorder) take() []notification {
	r.mu.Lock()
	defer r.mu.Unlock()
	got := r.got
	r.got = nil
	return got
}

// TestWatchesFireOnApply: each applied transaction fires the registry's
// watches with its events, in ZooKeeper's order and at its zxid, with
// the learner's lock held (no reader sees the tree between the change
// and its notifications), before the waiter of a forwarded write is
// answered; a one-shot watch fires once.
func TestWatchesFireOnApply(t *testing.T) {
	fx := start(t)
	r := &recorder{b: fx.b}
	reg := fx.b.Watches()
	reg.AddData("/app", r)
	reg.AddChild("/app", r)
	reg.AddExist("/app/new", r)

	// A write from this server's client: its waiter is answered after
	// the notifications.
	w := newWaiter(sessionA)
	w.inspect = func(*znode.Result, *znode.Tree) any { return r.take() }
	fx.b.Propose(create(sessionA, "/app/new", "n"), w)
	f := fx.c.ExpectRequest()
	created := fx.c.Answer(f, jute.OpCreate, zkleader.CreateTxn("/app/new", []byte("n"), false))
	o := w.outcome(t)
	want := []notification{{"/app/new", jute.EventNodeCreated, created.Zxid, true}, {"/app", jute.EventNodeChildrenChanged, created.Zxid, true}}
	if o.err != nil || !reflect.DeepEqual(o.seen, want) {
		t.Fatalf("create: %v; notified when answered: %+v, want %+v", o.err, o.seen, want)
	}

	// Another server's clients' writes.
	set := fx.c.Commit(zkleader.Txn{Session: 1<<56 | 1, Cxid: 1, Type: jute.OpSetData, Record: zkleader.SetDataTxn("/app", []byte("v2"), 1)})
	again := fx.c.Commit(zkleader.Txn{Session: 1<<56 | 1, Cxid: 2, Type: jute.OpSetData, Record: zkleader.SetDataTxn("/app", []byte("v3"), 2)})
	fx.applied(again.Zxid)
	want = []notification{{"/app", jute.EventNodeDataChanged, set.Zxid, true}}
	if got := r.take(); !reflect.DeepEqual(got, want) {
		t.Errorf("after two setData: %+v, want %+v (one-shot)", got, want)
	}
}

// TestCloseSessionApplied: a closeSession the leader commits (an expiry,
// or the client's close on another server) deletes the session's
// ephemerals, closes its connection here through the hook, with the
// learner's lock held, and forgets what the Backend kept of it: its
// identities and its place in the ping replies.
func TestCloseSessionApplied(t *testing.T) {
	fx := start(t)
	closed := hookClosed(fx.b)
	fx.createSession(sessionA, 4000)
	alice := []jute.Id{{Scheme: "digest", ID: "alice:hash"}}
	fx.b.Propose(&znode.Txn{Type: znode.OpSetIdentities, Session: sessionA, Ids: alice}, newWaiter(sessionA))
	w := newWaiter(sessionA)
	fx.b.Propose(write(sessionA, jute.OpCreate, &jute.CreateRequest{Path: "/app/eph", ACL: openACL, Flags: jute.FlagEphemeral}), w)
	f := fx.c.ExpectRequest()
	fx.c.Answer(f, jute.OpCreate, zkleader.CreateTxn("/app/eph", nil, true))
	w.result(t)
	if _, st, err := fx.data("/app/eph"); err != nil || st.EphemeralOwner != sessionA {
		t.Fatalf("/app/eph: %+v %v, want session A's ephemeral", st, err)
	}

	end := fx.c.Commit(zkleader.Txn{Session: sessionA, Type: jute.OpCloseSession, Record: zkleader.CloseSessionTxn("/app/eph")})
	if id := closed.next(t); id != sessionA {
		t.Fatalf("closed %#x, want session A", id)
	}
	fx.applied(end.Zxid)
	closed.mu.Lock()
	locked := closed.locked[sessionA]
	closed.mu.Unlock()
	if !locked {
		t.Error("the hook ran while a reader could take the tree")
	}
	if _, _, err := fx.data("/app/eph"); err == nil {
		t.Error("the ephemeral outlived its session")
	}
	fx.read(func(tree *znode.Tree) {
		if _, ok := tree.Session(sessionA); ok {
			t.Error("the session is still in the tree")
		}
	})
	fx.b.TouchSession(sessionA)
	if touched := fx.c.Ping(); len(touched) != 0 {
		t.Errorf("a closed session touched: %v", touched)
	}
	// A write of the session now (a reconnecting client's, which the
	// leader will refuse) carries no identities.
	fx.b.Propose(create(sessionA, "/app/late", ""), newWaiter(sessionA))
	if f := fx.c.ExpectRequest(); len(f.Auth) != 0 {
		t.Errorf("identities %v kept for a closed session", f.Auth)
	}
}

// TestLostLeader: when the synced connection ends the Backend reports it
// (the server then drops its clients), fails what was in flight as
// ErrLeaderLost and what comes as not synced, and stops serving; it
// reconnects, is synced by DIFF with what it missed (a new leader of a
// new epoch here), and serves again, reporting the next loss too.
func TestLostLeader(t *testing.T) {
	fx := start(t)
	inFlight := newWaiter(sessionA)
	fx.b.Propose(create(sessionA, "/app/lost", ""), inFlight)
	fx.c.ExpectRequest()
	revalidation := make(chan error, 1)
	go func() {
		_, err := fx.b.Revalidate(sessionB, 4000)
		revalidation <- err
	}()
	fx.c.ExpectRevalidate()
	fx.c.Close()

	if o := inFlight.outcome(t); !errors.Is(o.err, learner.ErrLeaderLost) {
		t.Errorf("the write in flight: %+v, want ErrLeaderLost", o)
	}
	if err := <-revalidation; !errors.Is(err, learner.ErrLeaderLost) {
		t.Errorf("the revalidation in flight: %v, want ErrLeaderLost", err)
	}
	select {
	case <-fx.lost:
	case <-time.After(wait):
		t.Fatal("the lost leader was not reported")
	}
	fx.waitFor(func(st learner.Status) bool { return !st.Synced })
	if fx.b.HasQuorum() {
		t.Error("serving with no leader")
	}
	w := newWaiter(sessionA)
	fx.b.Propose(create(sessionA, "/app/none", ""), w)
	if o := w.outcome(t); !errors.Is(o.err, learner.ErrNotSynced) {
		t.Errorf("a write with no leader: %+v, want ErrNotSynced", o)
	}

	// A new leader, which committed more meanwhile.
	last := fx.b.LastZxid()
	fx.ldr.NewEpoch()
	missed := fx.ldr.Log(zkleader.Txn{Session: 1<<56 | 1, Cxid: 9, Type: jute.OpCreate, Record: zkleader.CreateTxn("/app/missed", nil, false)})
	hello := fx.sync()
	if hello.LastZxid != last || hello.AcceptedEpoch != 1 || hello.CurrentEpoch != 1 {
		t.Errorf("handshake %+v, want the last zxid %#x held and epoch 1", hello, last)
	}
	if _, st, err := fx.data("/app/missed"); err != nil || st.Czxid != missed.Zxid || missed.Zxid>>32 != 2 {
		t.Errorf("/app/missed: %+v %v, want it from the DIFF at %#x", st, err, missed.Zxid)
	}
	if !fx.b.HasQuorum() || fx.b.Term() != 2 {
		t.Errorf("serving %v in epoch %d, want serving in epoch 2", fx.b.HasQuorum(), fx.b.Term())
	}
	fx.c.Close()
	select {
	case <-fx.lost:
	case <-time.After(wait):
		t.Fatal("the second loss was not reported")
	}
}

// TestLossBeforeTheLeaderWatcherRuns: a connection that synced and ended
// before the goroutine watching for losses first ran (a loaded machine
// schedules it late) is still reported, since Run counts the connections
// already ended when it starts, not the goroutine.
func TestLossBeforeTheLeaderWatcherRuns(t *testing.T) {
	fx := start(t)
	fx.c.Close()
	fx.waitFor(func(st learner.Status) bool { return !st.Synced })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	late := make(chan struct{}, 1)
	go fx.b.watchLeader(ctx, func() { late <- struct{}{} }, 0) // none had ended when Run started
	select {
	case <-late:
	case <-time.After(wait):
		t.Fatal("the loss before the watcher ran was not reported")
	}
}

// TestResumeFromSavedState: a Backend started from the tree a previous
// one saved announces that tree's last zxid and epoch, is synced by DIFF
// with what it missed, and serves the tree it had.
func TestResumeFromSavedState(t *testing.T) {
	fx := start(t)
	fx.c.Commit(zkleader.Txn{Session: 1<<56 | 1, Cxid: 1, Type: jute.OpCreate, Record: zkleader.CreateTxn("/app/kept", []byte("k"), false)})
	saved := fx.ldr.LastZxid()
	fx.applied(saved)
	var state bytes.Buffer
	if err := fx.b.Learner().SaveState(&state); err != nil {
		t.Fatal(err)
	}
	missed := fx.ldr.Log(zkleader.Txn{Session: 1<<56 | 1, Cxid: 2, Type: jute.OpCreate, Record: zkleader.CreateTxn("/app/missed", nil, false)})

	b, err := New(learner.Config{ID: observerID, Servers: []string{fx.ldr.Addr()}, Retry: 5 * time.Millisecond}, &state)
	if err != nil {
		t.Fatal(err)
	}
	if b.LastZxid() != saved {
		t.Fatalf("resumed at %#x, want %#x", b.LastZxid(), saved)
	}
	next := &fixture{t: t, ldr: fx.ldr, b: b, lost: make(chan struct{}, 16), ran: make(chan error, 1)}
	next.run()
	hello := next.sync()
	if hello.LastZxid != saved || hello.AcceptedEpoch != 1 || hello.CurrentEpoch != -1 {
		t.Errorf("handshake %+v, want zxid %#x in the accepted epoch 1", hello, saved)
	}
	if d, _, err := next.data("/app/kept"); err != nil || string(d) != "k" {
		t.Errorf("/app/kept: %q %v", d, err)
	}
	if _, st, err := next.data("/app/missed"); err != nil || st.Czxid != missed.Zxid {
		t.Errorf("/app/missed: %+v %v", st, err)
	}
}

// TestRunReturnsWhenDone: Run returns the context's error when it ends
// while following.
func TestRunReturnsWhenDone(t *testing.T) {
	ldr := zkleader.Listen(t)
	b, err := New(learner.Config{ID: observerID, Servers: []string{ldr.Addr()}, Retry: 5 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- b.Run(ctx, nil) }()
	ldr.AcceptSynced()
	cancel()
	select {
	case err := <-ran:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run: %v, want context.Canceled", err)
		}
	case <-time.After(wait):
		t.Fatal("Run did not return")
	}
}
