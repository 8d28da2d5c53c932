package observer

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	zapobserver "go.uber.org/zap/zaptest/observer"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/internal/testing/zkleader"
	"github.com/zkraft/zkraft/internal/zookeeper/datadir"
	"github.com/zkraft/zkraft/internal/zookeeper/learner"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// cutover is a Backend frozen and stopped for a cutover, with requests
// held.
type cutover struct {
	*fixture
	// stop is the zxid the learner stopped at.
	stop int64
	// held are the waiters of the requests held, in arrival order: a
	// create of /app/f2 by session A, a sync of A's, a create of /app/f3
	// by session B.
	held []*waiter
}

// freezeAndStop runs a cutover's first half against a scripted leader:
// sessions A and B created here, each with identities, a write in
// flight that Freeze waits for, three requests held while frozen, and
// the learner stopped at a zxid the stream had not reached.
func freezeAndStop(t *testing.T, cfgs ...func(*learner.Config)) *cutover {
	t.Helper()
	fx := start(t, cfgs...)
	fx.createSession(sessionA, 4000)
	fx.createSession(sessionB, 5000)
	fx.b.Propose(&znode.Txn{Type: znode.OpSetIdentities, Session: sessionA, Ids: []jute.Id{{Scheme: "digest", ID: "alice:hash"}}}, newWaiter(sessionA))
	fx.b.Propose(&znode.Txn{Type: znode.OpSetIdentities, Session: sessionB, Ids: []jute.Id{{Scheme: "digest", ID: "bob:hash"}}}, newWaiter(sessionB))

	inFlight := newWaiter(sessionA)
	fx.b.Propose(create(sessionA, "/app/f1", ""), inFlight)
	f1 := fx.c.ExpectRequest()
	type frozen struct {
		zxid int64
		err  error
	}
	froze := make(chan frozen, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		zxid, err := fx.b.Freeze(ctx)
		froze <- frozen{zxid, err}
	}()
	// Once frozen, Freeze waits for f1's answer and returns its zxid,
	// the last one then.
	eventually(t, "frozen", func() bool {
		fx.b.ho.mu.Lock()
		defer fx.b.ho.mu.Unlock()
		return fx.b.ho.frozen
	})
	sent1 := fx.c.Answer(f1, jute.OpCreate, zkleader.CreateTxn("/app/f1", nil, false))
	if r := <-froze; r.err != nil || r.zxid != sent1.Zxid {
		t.Fatalf("Freeze: %#x %v, want %#x once the write in flight was answered", r.zxid, r.err, sent1.Zxid)
	}
	if res := inFlight.result(t); res.Err != jute.OK {
		t.Fatalf("the write in flight: %v", res.Err)
	}

	cut := &cutover{fixture: fx, held: []*waiter{newWaiter(sessionA), newWaiter(sessionA), newWaiter(sessionB)}}
	fx.b.Propose(create(sessionA, "/app/f2", ""), cut.held[0])
	fx.b.Barrier(cut.held[1])
	fx.b.Propose(create(sessionB, "/app/f3", ""), cut.held[2])
	// Identities are kept and answered; a reconfig is refused.
	ids := newWaiter(sessionA)
	fx.b.Propose(&znode.Txn{Type: znode.OpSetIdentities, Session: sessionA, Ids: []jute.Id{{Scheme: "digest", ID: "alice:hash"}}}, ids)
	if res := ids.result(t); res.Err != jute.OK {
		t.Errorf("identities while frozen: %v", res.Err)
	}
	rc := newWaiter(sessionA)
	fx.b.Reconfig(&jute.ReconfigRequest{JoiningServers: "server.2=127.0.0.1:2889:3889"}, nil, rc)
	if res := rc.result(t); res.Err != jute.ErrReconfigInProgress {
		t.Errorf("reconfig while frozen: %v, want ReconfigInProgress", res.Err)
	}
	fx.noneForwarded()
	for _, w := range cut.held {
		w.pending(t)
	}

	// The stream goes on (reads with it) up to the stop, and no further.
	if err := fx.b.StopAt(context.Background(), sent1.Zxid-1); err == nil {
		t.Error("StopAt below the last zxid applied succeeded")
	}
	cut.stop = fx.ldr.LastZxid() + 2
	// The learner's own StopAt first, so that it is in force before the
	// stream reaches the stop; the Backend's then finds it reached.
	if err := fx.b.Learner().StopAt(cut.stop); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		fx.c.Commit(zkleader.Txn{Session: 1<<56 | 1, Cxid: int32(10 + i), Type: jute.OpCreate, Record: zkleader.CreateTxn(fmt.Sprintf("/app/other%d", i), nil, false)})
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := fx.b.StopAt(ctx, cut.stop); err != nil {
		t.Fatalf("StopAt: %v", err)
	}
	fx.c.ExpectClosed()
	if st := fx.b.Learner().Status(); !st.Stopped || st.LastZxid != cut.stop {
		t.Fatalf("status %+v, want stopped at %#x", st, cut.stop)
	}
	if _, _, err := fx.data("/app/other2"); err == nil {
		t.Error("a transaction past the stop was applied")
	}
	if !fx.b.HasQuorum() {
		t.Error("stopped for a cutover, the Backend no longer serves its clients")
	}
	return cut
}

// TestThawReleasesHeldInOrder: a cutover called off after the stop
// follows the leader again, revalidates every session held here on the
// new connection (a session the leader no longer knows has its
// connection closed), then forwards the held requests in the order they
// came; later ones go straight through.
func TestThawReleasesHeldInOrder(t *testing.T) {
	cut := freezeAndStop(t)
	fx := cut.fixture
	closed := hookClosed(fx.b)
	fx.b.Thaw()
	if hello := fx.sync(); hello.LastZxid != cut.stop {
		t.Fatalf("thawed, the learner announces %#x, want the stop %#x", hello.LastZxid, cut.stop)
	}
	asked := map[int64]int32{}
	for range 2 {
		id, timeout := fx.c.ExpectRevalidate()
		asked[id] = timeout
		fx.c.Revalidated(id, id == sessionA)
	}
	if !reflect.DeepEqual(asked, map[int64]int32{sessionA: 4000, sessionB: 5000}) {
		t.Errorf("revalidated %v, want both sessions with their timeouts", asked)
	}
	if id := closed.next(t); id != sessionB {
		t.Errorf("closed %#x, want session B, which the leader no longer knows", id)
	}

	f2 := fx.c.ExpectRequest()
	sync := fx.c.ExpectRequest()
	f3 := fx.c.ExpectRequest()
	if f2.Type != jute.OpCreate || f2.Session != sessionA || sync.Type != jute.OpSync || f3.Type != jute.OpCreate || f3.Session != sessionB {
		t.Fatalf("released %+v, %+v, %+v; want A's create, A's sync, B's create", f2, sync, f3)
	}
	sent2 := fx.c.Answer(f2, jute.OpCreate, zkleader.CreateTxn("/app/f2", nil, false))
	fx.c.Synced()
	sent3 := fx.c.Answer(f3, jute.OpError, zkleader.ErrorTxn(jute.ErrSessionMoved))
	if res := cut.held[0].result(t); res.Err != jute.OK || res.Zxid != sent2.Zxid {
		t.Errorf("held create: %+v", res)
	}
	if res := cut.held[1].result(t); res.Zxid != sent2.Zxid {
		t.Errorf("held sync: %+v, want answered at %#x", res, sent2.Zxid)
	}
	if res := cut.held[2].result(t); res.Err != jute.ErrSessionMoved || res.Zxid != sent3.Zxid {
		t.Errorf("held create of B: %+v", res)
	}

	// Unfrozen: a later write is forwarded at once.
	unfrozen(t, fx.b)
	select {
	case <-fx.lost:
		t.Error("a thaw after a DIFF dropped the clients")
	default:
	}
	// The stop's own end, seen only now by a watcher that counted before
	// it (one scheduled late), is not a lost leader either.
	late := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go fx.b.watchLeader(ctx, func() { late <- struct{}{} }, 0)
	select {
	case <-late:
		t.Error("the cutover's stop, seen after the thaw, was reported as a lost leader")
	case <-time.After(200 * time.Millisecond):
	}
	w := newWaiter(sessionA)
	fx.b.Propose(create(sessionA, "/app/after", ""), w)
	fx.c.Answer(fx.c.ExpectRequest(), jute.OpCreate, zkleader.CreateTxn("/app/after", nil, false))
	w.result(t)
}

// TestThawAfterASnapDropsTheClients: a cutover called off after the stop
// whose resync is a SNAP (ZooKeeper's leader committed too much
// meanwhile for a DIFF) has had its tree replaced without watch events,
// and the loss before it went unreported while frozen: the Thaw reports
// it, so the server drops its clients and their SetWatches catch them
// up. After a DIFF (TestThawReleasesHeldInOrder) the clients are kept.
func TestThawAfterASnapDropsTheClients(t *testing.T) {
	cut := freezeAndStop(t)
	fx := cut.fixture
	select {
	case <-fx.lost:
		t.Fatal("the cutover's stop was reported as a lost leader")
	default:
	}
	fx.ldr.Log(zkleader.Txn{Session: 1<<56 | 1, Cxid: 20, Type: jute.OpCreate, Record: zkleader.CreateTxn("/app/skipped", nil, false)})
	fx.b.Thaw()
	c := fx.ldr.Accept()
	c.Handshake()
	fx.c = c
	c.SyncSnap([]datadir.Node{{Path: "/"}, {Path: "/app", Data: []byte("v1")}, {Path: "/app/skipped"}, {Path: "/zookeeper"}, {Path: "/zookeeper/quota"}})
	for range 2 {
		id, _ := c.ExpectRevalidate()
		c.Revalidated(id, true)
	}
	select {
	case <-fx.lost:
	case <-time.After(wait):
		t.Fatal("a thaw after a SNAP kept the clients, whose watches missed the replaced tree")
	}
	if st := fx.b.Learner().Status(); st.LastSync != learner.SyncSnap || st.Replaced != 1 {
		t.Errorf("status %+v, want synced by SNAP once", st)
	}
}

// unfrozen waits until b lets requests through again (a Thaw's release
// ends).
func unfrozen(t *testing.T, b *Backend) {
	t.Helper()
	eventually(t, "unfrozen", func() bool {
		b.ho.mu.Lock()
		defer b.ho.mu.Unlock()
		return !b.ho.frozen && !b.ho.active.Load()
	})
}

// eventually waits until cond holds (what, when it does not).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestFreezeGivesUp: a Freeze whose context ends before the requests in
// flight are answered fails; a Thaw (no stop came) lets requests through
// again, and the one in flight is answered as usual.
func TestFreezeGivesUp(t *testing.T) {
	fx := start(t)
	inFlight := newWaiter(sessionA)
	fx.b.Propose(create(sessionA, "/app/slow", ""), inFlight)
	f := fx.c.ExpectRequest()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := fx.b.Freeze(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Freeze: %v, want the deadline", err)
	}
	held := newWaiter(sessionA)
	fx.b.Propose(create(sessionA, "/app/held", ""), held)
	fx.b.Thaw()
	g := fx.c.ExpectRequest()
	if g.Type != jute.OpCreate || g.Cxid == f.Cxid {
		t.Fatalf("released %+v", g)
	}
	fx.c.Answer(f, jute.OpCreate, zkleader.CreateTxn("/app/slow", nil, false))
	fx.c.Answer(g, jute.OpCreate, zkleader.CreateTxn("/app/held", nil, false))
	inFlight.result(t)
	held.result(t)
	unfrozen(t, fx.b)
	w := newWaiter(sessionA)
	fx.b.Propose(create(sessionA, "/app/after", ""), w)
	fx.c.Answer(fx.c.ExpectRequest(), jute.OpCreate, zkleader.CreateTxn("/app/after", nil, false))
	w.result(t)
}

// successor is the new ensemble's member as Handover sees it: it records
// what it is handed, in order, and answers each at once.
type successor struct {
	mu    sync.Mutex
	calls []string
	// refuse is a session whose identities it does not take.
	refuse int64
}

func (s *successor) record(call string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, call)
}

func (s *successor) taken() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

func (s *successor) Propose(txn *znode.Txn, w backend.Waiter) {
	if txn.Type == znode.OpSetIdentities {
		s.record(fmt.Sprintf("identities %#x %v", txn.Session, txn.Ids))
		res := &znode.Result{Zxid: 1}
		if txn.Session == s.refuse {
			res.Err = jute.ErrSystemError
		}
		w.Applied(res, nil)
		return
	}
	var req jute.CreateRequest
	_ = jute.Unmarshal(txn.Req, &req)
	s.record(fmt.Sprintf("propose %#x %d %s", txn.Session, txn.Type, req.Path))
	w.Applied(&znode.Result{Zxid: 42}, nil)
}

func (s *successor) Barrier(w backend.Waiter) {
	s.record(fmt.Sprintf("barrier %#x", sessionOf(w)))
	w.Applied(&znode.Result{Zxid: 42}, nil)
}

func (s *successor) Reconfig(_ *jute.ReconfigRequest, ids []jute.Id, w backend.Waiter) {
	s.record(fmt.Sprintf("reconfig %#x %v", sessionOf(w), ids))
	w.Applied(&znode.Result{Zxid: 42}, nil)
}

func (s *successor) TouchSession(id int64) { s.record(fmt.Sprintf("touch %#x", id)) }

// TestHandover: the new ensemble's member gets each session's
// identities, then the held requests in the order they came, then every
// later request and touch; Run returns, its work done. An identity set
// the member refuses is logged.
func TestHandover(t *testing.T) {
	core, logs := zapobserver.New(zapcore.WarnLevel)
	cut := freezeAndStop(t, func(cfg *learner.Config) { cfg.Logger = zap.New(core) })
	fx := cut.fixture
	next := &successor{refuse: sessionB}
	fx.b.Handover(next)
	for _, w := range cut.held {
		if res := w.result(t); res.Zxid != 42 {
			t.Errorf("a held request answered at %#x, not by the member", res.Zxid)
		}
	}
	calls := next.taken()
	if len(calls) != 5 {
		t.Fatalf("the member got %q", calls)
	}
	identities := slices.Sorted(slices.Values(calls[:2])) // a map's order
	want := []string{
		fmt.Sprintf("identities %#x [{digest alice:hash}]", sessionA),
		fmt.Sprintf("identities %#x [{digest bob:hash}]", sessionB),
	}
	if !reflect.DeepEqual(identities, want) {
		t.Errorf("identities handed over: %q, want %q", identities, want)
	}
	want = []string{
		fmt.Sprintf("propose %#x %d /app/f2", sessionA, jute.OpCreate),
		fmt.Sprintf("barrier %#x", sessionA),
		fmt.Sprintf("propose %#x %d /app/f3", sessionB, jute.OpCreate),
	}
	if !reflect.DeepEqual(calls[2:], want) {
		t.Errorf("held requests handed over: %q, want %q", calls[2:], want)
	}
	if n := logs.FilterMessage("a session's identities did not reach the new ensemble").Len(); n != 1 {
		t.Errorf("%d warnings of identities refused, want 1 (session B's)", n)
	}

	select {
	case err := <-fx.ran:
		if err != nil {
			t.Errorf("Run after the handover: %v, want nil", err)
		}
		fx.ran <- err // for the fixture's cleanup
	case <-time.After(wait):
		t.Fatal("Run goes on after the handover")
	}
	if !fx.b.HandedOver() || !fx.b.HasQuorum() {
		t.Errorf("handed over %v, serving %v", fx.b.HandedOver(), fx.b.HasQuorum())
	}

	later := []*waiter{newWaiter(sessionA), newWaiter(sessionA), newWaiter(sessionA)}
	fx.b.Propose(create(sessionA, "/app/later", ""), later[0])
	fx.b.Barrier(later[1])
	ids := []jute.Id{{Scheme: "super", ID: "admin"}}
	fx.b.Reconfig(&jute.ReconfigRequest{}, ids, later[2])
	fx.b.TouchSession(sessionA)
	for _, w := range later {
		if res := w.result(t); res.Zxid != 42 {
			t.Errorf("a later request answered at %#x, not by the member", res.Zxid)
		}
	}
	want = []string{
		fmt.Sprintf("propose %#x %d /app/later", sessionA, jute.OpCreate),
		fmt.Sprintf("barrier %#x", sessionA),
		fmt.Sprintf("reconfig %#x %v", sessionA, ids),
		fmt.Sprintf("touch %#x", sessionA),
	}
	if got := next.taken()[5:]; !reflect.DeepEqual(got, want) {
		t.Errorf("later requests: %q, want %q", got, want)
	}
	if _, err := fx.b.Freeze(context.Background()); err == nil {
		t.Error("Freeze after the handover succeeded")
	}
}
