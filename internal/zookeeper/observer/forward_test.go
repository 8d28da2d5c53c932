package observer

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/internal/testing/zkleader"
	"github.com/zkraft/zkraft/internal/zookeeper/importer"
	"github.com/zkraft/zkraft/internal/zookeeper/learner"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// TestWritesForwarded: a client's write goes to the leader as a REQUEST
// of its session, a cxid of the Backend's own, its bytes unchanged and
// the identities its connection last set (OpSetIdentities, answered
// here at once and not sent); the reply is built from the leader's
// transaction once applied here, with the tree as it is right after it.
func TestWritesForwarded(t *testing.T) {
	fx := start(t)
	alice := []jute.Id{{Scheme: "digest", ID: "alice:hash"}}
	w := newWaiter(sessionA)
	fx.b.Propose(&znode.Txn{Type: znode.OpSetIdentities, Session: sessionA, Ids: alice}, w)
	if res := w.result(t); res.Err != jute.OK || res.Zxid != fx.b.LastZxid() {
		t.Fatalf("setIdentities: %+v, want OK at the last zxid %#x", res, fx.b.LastZxid())
	}
	fx.noneForwarded()

	cxids := map[int32]bool{}
	// exchange proposes txn, checks the leader gets it as sent, answers
	// it with a transaction of type typ and record, and returns the
	// reply and what inspect saw in the tree then.
	exchange := func(txn *znode.Txn, typ jute.Op, record []byte, inspect func(*znode.Tree) any) (*znode.Result, zkleader.Txn, any) {
		t.Helper()
		w := newWaiter(txn.Session)
		if inspect != nil {
			w.inspect = func(_ *znode.Result, tree *znode.Tree) any { return inspect(tree) }
		}
		fx.b.Propose(txn, w)
		f := fx.c.ExpectRequest()
		if f.Session != txn.Session || f.Type != txn.Type || !bytes.Equal(f.Body, txn.Req) {
			t.Fatalf("forwarded %+v, want session %#x type %d and the request's bytes", f, txn.Session, txn.Type)
		}
		if !reflect.DeepEqual(f.Auth, alice) {
			t.Errorf("forwarded with identities %v, want %v", f.Auth, alice)
		}
		if cxids[f.Cxid] {
			t.Errorf("cxid %d forwarded twice", f.Cxid)
		}
		cxids[f.Cxid] = true
		sent := fx.c.Answer(f, typ, record)
		o := w.outcome(t)
		if o.err != nil {
			t.Fatal(o.err)
		}
		if o.res.Zxid != sent.Zxid {
			t.Errorf("reply zxid %#x, want the transaction's %#x", o.res.Zxid, sent.Zxid)
		}
		return o.res, sent, o.seen
	}
	exists := func(path string) func(*znode.Tree) any {
		return func(tree *znode.Tree) any {
			_, err := tree.Exists(path, superIds)
			return err == nil
		}
	}

	res, _, seen := exchange(create(sessionA, "/app/b", "b"), jute.OpCreate, zkleader.CreateTxn("/app/b", []byte("b"), false), exists("/app/b"))
	if p, ok := res.Resp.(*jute.PathRequest); res.Err != jute.OK || !ok || p.Path != "/app/b" || seen != true {
		t.Errorf("create: %v %#v, node there when answered: %v", res.Err, res.Resp, seen)
	}

	req := write(sessionA, jute.OpCreate2, &jute.CreateRequest{Path: "/app/c", Data: []byte("c"), ACL: openACL})
	res, sent, _ := exchange(req, jute.OpCreate2, zkleader.CreateTxn("/app/c", []byte("c"), false), nil)
	if c2, ok := res.Resp.(*jute.Create2Response); !ok || c2.Path != "/app/c" || c2.Stat.Czxid != sent.Zxid || c2.Stat.Ctime != sent.Time {
		t.Errorf("create2: %#v, want /app/c created at %#x, %d", res.Resp, sent.Zxid, sent.Time)
	}

	req = write(sessionA, jute.OpSetData, &jute.SetDataRequest{Path: "/app", Data: []byte("v2"), Version: 0})
	res, sent, _ = exchange(req, jute.OpSetData, zkleader.SetDataTxn("/app", []byte("v2"), 1), nil)
	if st, ok := res.Resp.(*jute.StatResponse); !ok || st.Stat.Version != 1 || st.Stat.Mzxid != sent.Zxid {
		t.Errorf("setData: %#v, want version 1 at %#x", res.Resp, sent.Zxid)
	}

	// The leader refuses a write with an error transaction: its code,
	// its zxid, no body, and nothing changed.
	req = write(sessionA, jute.OpSetData, &jute.SetDataRequest{Path: "/app", Data: []byte("v3"), Version: 7})
	res, _, _ = exchange(req, jute.OpError, zkleader.ErrorTxn(jute.ErrBadVersion), nil)
	if res.Err != jute.ErrBadVersion || res.Resp != nil {
		t.Errorf("refused setData: %v %#v, want BadVersion and no body", res.Err, res.Resp)
	}
	if data, _, _ := fx.data("/app"); string(data) != "v2" {
		t.Errorf("/app holds %q after a refused setData, want v2", data)
	}

	req = write(sessionA, jute.OpDelete, &jute.PathVersionRequest{Path: "/app/b", Version: -1})
	res, _, seen = exchange(req, jute.OpDelete, zkleader.DeleteTxn("/app/b"), exists("/app/b"))
	if res.Err != jute.OK || res.Resp != nil || seen != false {
		t.Errorf("delete: %v %#v, node there when answered: %v", res.Err, res.Resp, seen)
	}

	// ProposeWait is Propose and a wait.
	got := make(chan *znode.Result, 1)
	go func() {
		res, err := fx.b.ProposeWait(create(sessionA, "/app/d", ""))
		if err != nil {
			t.Error(err)
		}
		got <- res
	}()
	f := fx.c.ExpectRequest()
	sent = fx.c.Answer(f, jute.OpCreate, zkleader.CreateTxn("/app/d", nil, false))
	if res := <-got; res == nil || res.Err != jute.OK || res.Zxid != sent.Zxid {
		t.Errorf("ProposeWait: %+v", res)
	}
}

// TestMultiReplies: a multi's reply is built from its MultiTxn as
// ZooKeeper's FinalRequestProcessor builds it: one result per op in
// order when it succeeded (a check's of its own, though it changes
// nothing), and when it failed an ErrorResult per op, OK before the
// failing op and the error transactions' codes from it on, with nothing
// applied.
func TestMultiReplies(t *testing.T) {
	fx := start(t)
	multi := &jute.MultiRequest{Ops: []jute.MultiOp{
		{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: "/app/m", ACL: openACL}},
		{Type: jute.OpCheck, Req: &jute.PathVersionRequest{Path: "/app", Version: 0}},
		{Type: jute.OpSetData, Req: &jute.SetDataRequest{Path: "/app", Data: []byte("multi"), Version: 0}},
		{Type: jute.OpDelete, Req: &jute.PathVersionRequest{Path: "/app/a", Version: -1}},
		{Type: jute.OpCreate2, Req: &jute.CreateRequest{Path: "/app/m2", ACL: openACL}},
	}}
	w := newWaiter(sessionA)
	fx.b.Propose(write(sessionA, jute.OpMulti, multi), w)
	f := fx.c.ExpectRequest()
	if f.Type != jute.OpMulti {
		t.Fatalf("forwarded type %d", f.Type)
	}
	sent := fx.c.Answer(f, jute.OpMulti, zkleader.MultiTxn(
		zkleader.Op{Type: jute.OpCreate, Record: zkleader.CreateTxn("/app/m", nil, false)},
		zkleader.Op{Type: jute.OpCheck, Record: zkleader.CheckVersionTxn("/app", 0)},
		zkleader.Op{Type: jute.OpSetData, Record: zkleader.SetDataTxn("/app", []byte("multi"), 1)},
		zkleader.Op{Type: jute.OpDelete, Record: zkleader.DeleteTxn("/app/a")},
		zkleader.Op{Type: jute.OpCreate2, Record: zkleader.CreateTxn("/app/m2", nil, false)},
	))
	res := w.result(t)
	m, ok := res.Resp.(*jute.MultiResponse)
	if res.Err != jute.OK || res.Zxid != sent.Zxid || !ok || len(m.Results) != 5 {
		t.Fatalf("multi: %v at %#x, %#v", res.Err, res.Zxid, res.Resp)
	}
	wantTypes := []jute.Op{jute.OpCreate, jute.OpCheck, jute.OpSetData, jute.OpDelete, jute.OpCreate2}
	for i, r := range m.Results {
		if r.Type != wantTypes[i] || r.Err != jute.OK {
			t.Errorf("result %d: %+v, want type %d", i, r, wantTypes[i])
		}
	}
	if p, ok := m.Results[0].Resp.(*jute.PathRequest); !ok || p.Path != "/app/m" {
		t.Errorf("create's result %#v", m.Results[0].Resp)
	}
	if st, ok := m.Results[2].Resp.(*jute.StatResponse); !ok || st.Stat.Version != 1 || st.Stat.Mzxid != sent.Zxid {
		t.Errorf("setData's result %#v", m.Results[2].Resp)
	}
	if c2, ok := m.Results[4].Resp.(*jute.Create2Response); !ok || c2.Path != "/app/m2" || c2.Stat.Czxid != sent.Zxid {
		t.Errorf("create2's result %#v", m.Results[4].Resp)
	}
	// It encodes as a client reads it.
	var back jute.MultiResponse
	if err := jute.Unmarshal(jute.Marshal(m), &back); err != nil || len(back.Results) != 5 {
		t.Fatalf("round trip: %+v, %v", back, err)
	}

	// A failed multi: the create before the failing delete keeps its
	// transaction, the delete's is NoNode, the rest RuntimeInconsistency.
	failing := &jute.MultiRequest{Ops: []jute.MultiOp{
		{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: "/app/x", ACL: openACL}},
		{Type: jute.OpDelete, Req: &jute.PathVersionRequest{Path: "/app/none", Version: -1}},
		{Type: jute.OpSetData, Req: &jute.SetDataRequest{Path: "/app", Version: -1}},
	}}
	w = newWaiter(sessionA)
	fx.b.Propose(write(sessionA, jute.OpMulti, failing), w)
	f = fx.c.ExpectRequest()
	sent = fx.c.Answer(f, jute.OpMulti, zkleader.MultiTxn(
		zkleader.Op{Type: jute.OpCreate, Record: zkleader.CreateTxn("/app/x", nil, false)},
		zkleader.Op{Type: jute.OpError, Record: zkleader.ErrorTxn(jute.ErrNoNode)},
		zkleader.Op{Type: jute.OpError, Record: zkleader.ErrorTxn(jute.ErrRuntimeInconsistency)},
	))
	res = w.result(t)
	m, ok = res.Resp.(*jute.MultiResponse)
	if res.Err != jute.OK || res.Zxid != sent.Zxid || !ok || len(m.Results) != 3 {
		t.Fatalf("failed multi: %v at %#x, %#v", res.Err, res.Zxid, res.Resp)
	}
	for i, want := range []jute.ErrCode{jute.OK, jute.ErrNoNode, jute.ErrRuntimeInconsistency} {
		if r := m.Results[i]; r.Type != jute.OpError || r.Err != want || r.Resp != nil {
			t.Errorf("result %d: %+v, want an ErrorResult %v", i, r, want)
		}
	}
	if _, _, err := fx.data("/app/x"); err == nil {
		t.Error("the failed multi's create was applied")
	}
	if fx.b.LastZxid() != sent.Zxid {
		t.Errorf("last zxid %#x, want the failed multi's %#x", fx.b.LastZxid(), sent.Zxid)
	}
}

// TestCreateSession: a new session is forwarded as ZooKeeper's observers
// forward it: a createSession of the id session allocated (this server's
// id in its top byte), cxid 0, the timeout its only data and no
// identities. Its password is ZooKeeper's, derived from the id, which
// the applied transaction puts in the tree. The sessions created here
// are kept alive in the replies to the leader's pings while clients use
// them; one the leader refused is not.
func TestCreateSession(t *testing.T) {
	fx := start(t)
	w := newWaiter(0)
	fx.b.Propose(&znode.Txn{Type: jute.OpCreateSession, Session: sessionA, Timeout: 4000, Passwd: []byte("not ZooKeeper's")}, w)
	f := fx.c.ExpectRequest()
	if f.Session != sessionA || f.Cxid != 0 || f.Type != jute.OpCreateSession || binary.BigEndian.Uint32(f.Body) != 4000 || len(f.Body) != 4 || len(f.Auth) != 0 {
		t.Fatalf("forwarded %+v, want session %#x's createSession of timeout 4000", f, sessionA)
	}
	sent := fx.c.Answer(f, jute.OpCreateSession, zkleader.CreateSessionTxn(4000))
	if res := w.result(t); res.Err != jute.OK || res.Zxid != sent.Zxid {
		t.Fatalf("createSession: %+v", res)
	}
	fx.read(func(tree *znode.Tree) {
		info, ok := tree.Session(sessionA)
		if !ok || info.Timeout != 4000 || !bytes.Equal(info.Passwd, importer.Passwd(sessionA)) {
			t.Errorf("session in the tree: %+v %v, want timeout 4000 and ZooKeeper's password", info, ok)
		}
	})
	if !bytes.Equal(fx.b.SessionPasswd(sessionA), importer.Passwd(sessionA)) {
		t.Error("SessionPasswd is not ZooKeeper's password")
	}

	if touched := fx.c.Ping(); len(touched) != 0 {
		t.Errorf("sessions touched before any use: %v", touched)
	}
	fx.b.TouchSession(sessionA)
	fx.b.TouchSession(sessionB) // not a session of this server
	if touched := fx.c.Ping(); !reflect.DeepEqual(touched, map[int64]int32{sessionA: 4000}) {
		t.Errorf("ping reply %v, want session A with its timeout", touched)
	}
	if touched := fx.c.Ping(); len(touched) != 0 {
		t.Errorf("second ping reply %v, want none touched since the first", touched)
	}

	// A createSession the leader refuses.
	w = newWaiter(0)
	fx.b.Propose(&znode.Txn{Type: jute.OpCreateSession, Session: sessionB, Timeout: 4000}, w)
	f = fx.c.ExpectRequest()
	fx.c.Answer(f, jute.OpError, zkleader.ErrorTxn(jute.ErrSessionExpired))
	if res := w.result(t); res.Err != jute.ErrSessionExpired {
		t.Fatalf("refused createSession: %v", res.Err)
	}
	fx.b.TouchSession(sessionB)
	if touched := fx.c.Ping(); len(touched) != 0 {
		t.Errorf("a refused session was touched: %v", touched)
	}
}

// TestRevalidate: a session a client brings from another server is
// asked about with REVALIDATE of its id and timeout; a valid one is this
// server's from then on (touched at once and when used), an expired one
// is not.
func TestRevalidate(t *testing.T) {
	fx := start(t)
	type answer struct {
		ok  bool
		err error
	}
	revalidate := func(id int64, valid bool) answer {
		t.Helper()
		got := make(chan answer, 1)
		go func() {
			ok, err := fx.b.Revalidate(id, 6000)
			got <- answer{ok, err}
		}()
		if gotID, timeout := fx.c.ExpectRevalidate(); gotID != id || timeout != 6000 {
			t.Fatalf("REVALIDATE of %#x, %d; want %#x, 6000", gotID, timeout, id)
		}
		fx.c.Revalidated(id, valid)
		return <-got
	}
	elsewhere := int64(1)<<56 | 9 // created on ZooKeeper's server 1
	if a := revalidate(elsewhere, true); !a.ok || a.err != nil {
		t.Fatalf("a valid session: %v %v", a.ok, a.err)
	}
	if touched := fx.c.Ping(); !reflect.DeepEqual(touched, map[int64]int32{elsewhere: 6000}) {
		t.Errorf("ping reply %v, want the revalidated session (taken over at once)", touched)
	}
	fx.b.TouchSession(elsewhere)
	if touched := fx.c.Ping(); touched[elsewhere] != 6000 {
		t.Errorf("ping reply %v, want the revalidated session, used", touched)
	}

	expired := int64(1)<<56 | 10
	if a := revalidate(expired, false); a.ok || a.err != nil {
		t.Fatalf("an expired session: %v %v", a.ok, a.err)
	}
	fx.b.TouchSession(expired)
	if touched := fx.c.Ping(); len(touched) != 0 {
		t.Errorf("ping reply %v: an expired session touched", touched)
	}
}

// TestBarrier: a sync is forwarded for the waiter's session and
// completes once the leader's SYNC arrives, everything the leader
// committed before it applied here by then; an abandoned one is not
// sent.
func TestBarrier(t *testing.T) {
	fx := start(t)
	w := newWaiter(sessionA)
	fx.b.Barrier(w)
	f := fx.c.ExpectRequest()
	var path jute.PathRequest
	if err := jute.Unmarshal(f.Body, &path); err != nil || f.Type != jute.OpSync || f.Session != sessionA || path.Path != "/" {
		t.Fatalf("forwarded %+v (%q, %v), want a sync of / for session A", f, path.Path, err)
	}
	// Another server's client wrote meanwhile.
	other := fx.c.Commit(zkleader.Txn{Session: 1<<56 | 1, Cxid: 1, Type: jute.OpSetData, Record: zkleader.SetDataTxn("/app", []byte("other"), 1)})
	w.pending(t)
	fx.c.Synced()
	if res := w.result(t); res.Err != jute.OK || res.Zxid != other.Zxid {
		t.Fatalf("barrier: %+v, want OK at %#x", res, other.Zxid)
	}

	gone := newWaiter(sessionA)
	gone.abandoned = true
	fx.b.Barrier(gone)
	if o := gone.outcome(t); !errors.Is(o.err, ErrRequesterGone) {
		t.Fatalf("abandoned barrier: %+v", o)
	}
	fx.noneForwarded()
}

// TestAbandonedNotSent: a write or reconfig whose connection closed
// before it was forwarded fails with ErrRequesterGone and is not sent.
func TestAbandonedNotSent(t *testing.T) {
	fx := start(t)
	w := newWaiter(sessionA)
	w.abandoned = true
	fx.b.Propose(create(sessionA, "/app/gone", ""), w)
	if o := w.outcome(t); !errors.Is(o.err, ErrRequesterGone) {
		t.Fatalf("abandoned write: %+v", o)
	}
	w = newWaiter(sessionA)
	w.abandoned = true
	fx.b.Reconfig(&jute.ReconfigRequest{NewMembers: "server.1=x:1:2"}, nil, w)
	if o := w.outcome(t); !errors.Is(o.err, ErrRequesterGone) {
		t.Fatalf("abandoned reconfig: %+v", o)
	}
	fx.noneForwarded()
}

// TestReconfigForwarded: a reconfig goes to the leader with the
// identities the session layer passes; the leader's INFORMANDACTIVATE
// of the new configuration answers it with /zookeeper/config's data and
// Stat, and the membership is the new one (its version the
// transaction's zxid). A reconfig the leader refuses is answered with
// its code.
func TestReconfigForwarded(t *testing.T) {
	fx := start(t)
	fx.b.SetMembers([]backend.Peer{{ID: 1, Addr: fx.ldr.Addr()}, {ID: observerID, Addr: "127.0.0.1:2890", Observer: true}})
	if id, addr, ok := fx.b.Leader(); id != 1 || addr != fx.ldr.Addr() || !ok {
		t.Fatalf("Leader() %d %s %v before the reconfig, want zoo.cfg's server 1", id, addr, ok)
	}
	super := []jute.Id{{Scheme: "super", ID: "admin"}}
	req := &jute.ReconfigRequest{JoiningServers: "server.2=127.0.0.1:2889:3889:participant;2182", NullLeaving: true, NullNewMembers: true, CurConfigID: -1}
	w := newWaiter(sessionA)
	fx.b.Reconfig(req, super, w)
	f := fx.c.ExpectRequest()
	if f.Type != jute.OpReconfig || f.Session != sessionA || !bytes.Equal(f.Body, jute.Marshal(req)) || !reflect.DeepEqual(f.Auth, super) {
		t.Fatalf("forwarded %+v, want session A's reconfig with its identities", f)
	}
	members := fmt.Sprintf("server.1=%s:3888:participant;127.0.0.1:2181\nserver.2=127.0.0.1:2889:3889:participant;127.0.0.1:2182\nserver.%d=127.0.0.1:2890:3890:observer;127.0.0.1:2185\n", fx.ldr.Addr(), observerID)
	sent := fx.c.AnswerReconfig(f, members, 1)
	res := w.result(t)
	got, ok := res.Resp.(*jute.GetDataResponse)
	want := fmt.Sprintf("%sversion=%x", members, sent.Zxid)
	if res.Err != jute.OK || !ok || string(got.Data) != want || got.Stat.Mzxid != sent.Zxid {
		t.Fatalf("reconfig: %v %#v, want /zookeeper/config's %q at %#x", res.Err, res.Resp, want, sent.Zxid)
	}
	peers, version := fx.b.Membership()
	if version != sent.Zxid || len(peers) != 3 || fx.b.QuorumSize() != 2 {
		t.Errorf("membership %+v version %#x, quorum %d; want the new three, version %#x, two voters", peers, version, fx.b.QuorumSize(), sent.Zxid)
	}
	if id, _, _ := fx.b.Leader(); id != 1 {
		t.Errorf("Leader() id %d after the reconfig, want 1", id)
	}

	w = newWaiter(sessionA)
	fx.b.Reconfig(req, super, w)
	f = fx.c.ExpectRequest()
	fx.c.Answer(f, jute.OpError, zkleader.ErrorTxn(jute.ErrNewConfigNoQuorum))
	if res := w.result(t); res.Err != jute.ErrNewConfigNoQuorum {
		t.Fatalf("refused reconfig: %v", res.Err)
	}
}

// TestNotFollowing: before the first sync, and while the leader is
// lost, writes and syncs fail at once as not synced, and a revalidation
// as an error.
func TestNotFollowing(t *testing.T) {
	b, err := New(learner.Config{ID: observerID, Servers: []string{"127.0.0.1:1"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b.HasQuorum() {
		t.Fatal("serving before the first sync")
	}
	w := newWaiter(sessionA)
	b.Propose(create(sessionA, "/x", ""), w)
	if o := w.outcome(t); !errors.Is(o.err, learner.ErrNotSynced) {
		t.Errorf("write: %+v, want ErrNotSynced", o)
	}
	w = newWaiter(sessionA)
	b.Barrier(w)
	if o := w.outcome(t); !errors.Is(o.err, learner.ErrNotSynced) {
		t.Errorf("barrier: %+v, want ErrNotSynced", o)
	}
	w = newWaiter(0)
	b.Propose(&znode.Txn{Type: jute.OpCreateSession, Session: sessionA, Timeout: 4000}, w)
	if o := w.outcome(t); !errors.Is(o.err, learner.ErrNotSynced) {
		t.Errorf("createSession: %+v, want ErrNotSynced", o)
	}
	if ok, err := b.Revalidate(sessionA, 4000); ok || !errors.Is(err, learner.ErrNotSynced) {
		t.Errorf("revalidate: %v %v, want ErrNotSynced", ok, err)
	}
	// Nothing is in flight: a freeze has nothing to wait for.
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if zxid, err := b.Freeze(ctx); err != nil || zxid != 0 {
		t.Errorf("Freeze: %#x %v", zxid, err)
	}
}

// TestNewTakesIDsRefusesBadState: every server id ZooKeeper's leader
// takes from an observer (any long: 0, 300) is taken; a saved state that
// is not one is refused.
func TestNewTakesIDsRefusesBadState(t *testing.T) {
	for _, id := range []int64{0, 1, 256, 300} {
		if _, err := New(learner.Config{ID: id}, nil); err != nil {
			t.Errorf("id %d: %v", id, err)
		}
	}
	if _, err := New(learner.Config{ID: 1}, strings.NewReader("not a tree")); err == nil {
		t.Error("a saved state of garbage accepted")
	}
}
