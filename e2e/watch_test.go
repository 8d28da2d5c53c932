package e2e

import (
	"fmt"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/zkraft/zkraft/jute"
)

// TestWatchExists covers exists watches on missing and existing nodes.
func TestWatchExists(t *testing.T) {
	t.Parallel()
	c := connect(t, shared, sessionTimeout)
	m := connect(t, shared, sessionTimeout)
	root := testRoot(t, c)
	p := root + "/n"

	ok, _, ch, err := c.ExistsW(p)
	if err != nil || ok {
		t.Fatalf("existsW missing = %v %v", ok, err)
	}
	mustCreate(t, m, p, nil, 0)
	waitEvent(t, ch, zk.EventNodeCreated, p)

	_, _, ch, err = c.ExistsW(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Set(p, []byte("x"), -1); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, ch, zk.EventNodeDataChanged, p)

	_, _, ch, _ = c.ExistsW(p)
	if err := m.Delete(p, -1); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, ch, zk.EventNodeDeleted, p)
}

// TestWatchGetData covers data watches set by getData.
func TestWatchGetData(t *testing.T) {
	t.Parallel()
	c := connect(t, shared, sessionTimeout)
	m := connect(t, shared, sessionTimeout)
	root := testRoot(t, c)
	p := root + "/n"
	mustCreate(t, m, p, nil, 0)

	_, _, ch, err := c.GetW(p)
	if err != nil {
		t.Fatal(err)
	}
	// setACL and child changes do not fire a data watch.
	if _, err := m.SetACL(p, openACL, -1); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, m, p+"/child", nil, 0)
	noEvent(t, ch, quiet)
	if _, err := m.Set(p, []byte("1"), -1); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, ch, zk.EventNodeDataChanged, p)

	_, _, ch, _ = c.GetW(p)
	if err := m.Delete(p+"/child", -1); err != nil {
		t.Fatal(err)
	}
	if err := m.Delete(p, -1); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, ch, zk.EventNodeDeleted, p)

	// getData on a missing node sets no watch.
	if _, _, _, err := c.GetW(p); err != zk.ErrNoNode {
		t.Fatalf("getW missing: %v", err)
	}
}

// TestWatchChildren covers child watches.
func TestWatchChildren(t *testing.T) {
	t.Parallel()
	c := connect(t, shared, sessionTimeout)
	m := connect(t, shared, sessionTimeout)
	root := testRoot(t, c)
	p := root + "/n"
	mustCreate(t, m, p, nil, 0)

	_, _, ch, err := c.ChildrenW(p)
	if err != nil {
		t.Fatal(err)
	}
	// Data changes of the node or of a grandchild do not fire it.
	if _, err := m.Set(p, []byte("x"), -1); err != nil {
		t.Fatal(err)
	}
	noEvent(t, ch, quiet)
	mustCreate(t, m, p+"/a", nil, 0)
	waitEvent(t, ch, zk.EventNodeChildrenChanged, p)

	_, _, ch, _ = c.ChildrenW(p)
	mustCreate(t, m, p+"/a/grandchild", nil, 0)
	if _, err := m.Set(p+"/a", []byte("x"), -1); err != nil {
		t.Fatal(err)
	}
	noEvent(t, ch, quiet)
	if err := m.Delete(p+"/a/grandchild", -1); err != nil {
		t.Fatal(err)
	}
	if err := m.Delete(p+"/a", -1); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, ch, zk.EventNodeChildrenChanged, p)

	_, _, ch, _ = c.ChildrenW(p)
	if err := m.Delete(p, -1); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, ch, zk.EventNodeDeleted, p)
}

// watchHarness is a raw watcher session and a raw mutator session.
type watchHarness struct {
	w, m *rawConn
}

// newWatchHarness opens the two raw sessions on the shared server.
func newWatchHarness(t *testing.T) *watchHarness {
	return &watchHarness{
		w: newRawSession(t, shared, int32(sessionTimeout.Milliseconds())),
		m: newRawSession(t, shared, int32(sessionTimeout.Milliseconds())),
	}
}

// mutate runs a write on the mutator session and returns its zxid.
func (h *watchHarness) mutate(t *testing.T, op jute.Op, req jute.Record) int64 {
	t.Helper()
	hdr := h.m.call(op, req, nil)
	if hdr.Err != jute.OK {
		t.Fatalf("mutator op %d %+v: err %d", op, req, hdr.Err)
	}
	return hdr.Zxid
}

// watch sets a watch from the watcher session and checks the reply code.
func (h *watchHarness) watch(t *testing.T, op jute.Op, path string, want jute.ErrCode) {
	t.Helper()
	if got := h.w.callErr(op, &jute.PathWatchRequest{Path: path, Watch: true}); got != want {
		t.Fatalf("watch op %d on %s: err %d, want %d", op, path, got, want)
	}
}

// expect drains the watcher: a round trip guarantees every notification of
// the writes done so far has arrived; the events must be exactly want.
func (h *watchHarness) expect(t *testing.T, want []rawEvent) {
	t.Helper()
	h.w.ping()
	got := h.w.Events
	h.w.Events = nil
	if len(got) != len(want) {
		t.Fatalf("events = %v, want %v", got, want)
	}
	for i := range got {
		if got[i].Type != want[i].Type || got[i].Path != want[i].Path {
			t.Fatalf("events = %v, want %v", got, want)
		}
		checkEventZxid(t, got[i], want[i].Zxid)
	}
}

// checkEventZxid checks a notification's header zxid: -1 in 3.8, the
// triggering transaction's zxid since 3.9.
func checkEventZxid(t *testing.T, ev rawEvent, txn int64) {
	t.Helper()
	want := txn
	if target == targetZookeeper {
		want = -1
	}
	if ev.Zxid != want {
		t.Errorf("event %v %s: header zxid %#x, want %#x", ev.Type, ev.Path, ev.Zxid, want)
	}
}

// create is a persistent, world-open create request for path.
func create(path string) *jute.CreateRequest {
	return &jute.CreateRequest{Path: path, ACL: rawOpenACL}
}

// del is a delete request for path at any version.
func del(path string) *jute.PathVersionRequest {
	return &jute.PathVersionRequest{Path: path, Version: -1}
}

// set is a setData request for path at any version.
func set(path, data string) *jute.SetDataRequest {
	return &jute.SetDataRequest{Path: path, Data: []byte(data), Version: -1}
}

// TestWatchEventSequence checks the exact events of several watch kinds,
// their order within one transaction, and that every watch fires once.
func TestWatchEventSequence(t *testing.T) {
	t.Parallel()
	h := newWatchHarness(t)
	gz := connect(t, shared, sessionTimeout)
	r := testRoot(t, gz)
	h.mutate(t, jute.OpCreate, create(r+"/b"))
	h.mutate(t, jute.OpCreate, create(r+"/c"))

	h.watch(t, jute.OpExists, r+"/a", jute.ErrNoNode)
	h.watch(t, jute.OpGetData, r+"/b", jute.OK)
	h.watch(t, jute.OpGetChildren, r, jute.OK)
	// Data and child watch of one session on one node: a delete notifies once.
	h.watch(t, jute.OpGetData, r+"/c", jute.OK)
	h.watch(t, jute.OpGetChildren, r+"/c", jute.OK)
	h.watch(t, jute.OpExists, r+"/c", jute.OK)
	h.expect(t, nil)

	z1 := h.mutate(t, jute.OpCreate, create(r+"/a"))
	z2 := h.mutate(t, jute.OpSetData, set(r+"/b", "1"))
	z3 := h.mutate(t, jute.OpDelete, del(r+"/c"))
	h.expect(t, []rawEvent{
		{z1, jute.EventNodeCreated, r + "/a"},
		{z1, jute.EventNodeChildrenChanged, r},
		{z2, jute.EventNodeDataChanged, r + "/b"},
		{z3, jute.EventNodeDeleted, r + "/c"},
	})

	// All watches were one-shot.
	h.mutate(t, jute.OpSetData, set(r+"/a", "x"))
	h.mutate(t, jute.OpSetData, set(r+"/b", "2"))
	h.mutate(t, jute.OpCreate, create(r+"/d"))
	h.mutate(t, jute.OpDelete, del(r+"/a"))
	h.expect(t, nil)

	// Watches on the same node from several calls still fire once.
	h.watch(t, jute.OpGetData, r+"/b", jute.OK)
	h.watch(t, jute.OpGetData, r+"/b", jute.OK)
	h.watch(t, jute.OpExists, r+"/b", jute.OK)
	z4 := h.mutate(t, jute.OpSetData, set(r+"/b", "3"))
	h.expect(t, []rawEvent{{z4, jute.EventNodeDataChanged, r + "/b"}})

	// A multi fires in op order with the multi's single zxid.
	h.watch(t, jute.OpGetData, r+"/b", jute.OK)
	h.watch(t, jute.OpExists, r+"/e", jute.ErrNoNode)
	h.watch(t, jute.OpGetChildren, r+"/d", jute.OK)
	h.watch(t, jute.OpGetData, r+"/d", jute.OK)
	z5 := h.mutate(t, jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{
		{Type: jute.OpSetData, Req: set(r+"/b", "4")},
		{Type: jute.OpCreate, Req: create(r + "/e")},
		{Type: jute.OpDelete, Req: del(r + "/d")},
	}})
	h.expect(t, []rawEvent{
		{z5, jute.EventNodeDataChanged, r + "/b"},
		{z5, jute.EventNodeCreated, r + "/e"},
		{z5, jute.EventNodeDeleted, r + "/d"},
	})
	// A failed multi fires nothing.
	h.watch(t, jute.OpGetData, r+"/b", jute.OK)
	var resp jute.MultiResponse
	hdr := h.m.call(jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{
		{Type: jute.OpSetData, Req: set(r+"/b", "5")},
		{Type: jute.OpCheck, Req: &jute.PathVersionRequest{Path: r + "/b", Version: 99}},
	}}, &resp)
	if hdr.Err != jute.OK || len(resp.Results) != 2 || resp.Results[1].Err != jute.ErrBadVersion {
		t.Fatalf("failing multi: %+v %+v", hdr, resp)
	}
	h.expect(t, nil)
}

// TestWatchBeforeReply checks that a session's own write delivers the
// notification it triggers before the write's reply.
func TestWatchBeforeReply(t *testing.T) {
	t.Parallel()
	h := newWatchHarness(t)
	gz := connect(t, shared, sessionTimeout)
	r := testRoot(t, gz)
	w := h.w
	for _, step := range []struct {
		watchOp jute.Op
		path    string
		op      jute.Op
		req     jute.Record
		ev      jute.EventType
		evPath  string
	}{
		{jute.OpExists, r + "/n", jute.OpCreate, create(r + "/n"), jute.EventNodeCreated, r + "/n"},
		{jute.OpGetData, r + "/n", jute.OpSetData, set(r+"/n", "x"), jute.EventNodeDataChanged, r + "/n"},
		{jute.OpGetChildren, r, jute.OpCreate, create(r + "/m"), jute.EventNodeChildrenChanged, r},
		{jute.OpGetData, r + "/n", jute.OpDelete, del(r + "/n"), jute.EventNodeDeleted, r + "/n"},
	} {
		if got := w.callErr(step.watchOp, &jute.PathWatchRequest{Path: step.path, Watch: true}); got != jute.OK && got != jute.ErrNoNode {
			t.Fatalf("watch: %d", got)
		}
		xid := w.send(step.op, step.req)
		first, err := w.readAny()
		if err != nil {
			t.Fatal(err)
		}
		if first.Hdr.Xid != jute.XidNotification {
			t.Fatalf("op %d: first frame is xid %d, want the notification (-1)", step.op, first.Hdr.Xid)
		}
		var ev jute.WatcherEvent
		if err := jute.Unmarshal(first.Body, &ev); err != nil || ev.Type != step.ev || ev.Path != step.evPath || ev.State != jute.StateSyncConnected {
			t.Errorf("notification = %+v %v, want %v %s", ev, err, step.ev, step.evPath)
		}
		reply := w.recv()
		if reply.Hdr.Xid != xid || reply.Hdr.Err != jute.OK {
			t.Fatalf("reply = %+v, want xid %d", reply.Hdr, xid)
		}
		checkEventZxid(t, rawEvent{Zxid: first.Hdr.Zxid, Type: ev.Type, Path: ev.Path}, reply.Hdr.Zxid)
	}
}

// TestWatchBeforeNewData checks ZooKeeper's ordering guarantee across
// sessions: a client that reads the new data has already seen the event.
func TestWatchBeforeNewData(t *testing.T) {
	t.Parallel()
	c := connect(t, shared, sessionTimeout)
	m := connect(t, shared, sessionTimeout)
	root := testRoot(t, c)
	p := root + "/n"
	mustCreate(t, m, p, []byte("0"), 0)
	for i := 1; i <= 20; i++ {
		_, _, ch, err := c.GetW(p)
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprint(i)
		if _, err := m.Set(p, []byte(want), -1); err != nil {
			t.Fatal(err)
		}
		for {
			data, _, err := c.Get(p)
			if err != nil {
				t.Fatal(err)
			}
			if string(data) == want {
				break
			}
		}
		select {
		case ev := <-ch:
			if ev.Type != zk.EventNodeDataChanged {
				t.Fatalf("event %v", ev)
			}
		default:
			t.Fatalf("round %d: new data read before its NodeDataChanged arrived", i)
		}
	}
}

// TestWatchIsPerSession checks that watches are per session: a
// watch set by one session is not delivered to another.
func TestWatchIsPerSession(t *testing.T) {
	t.Parallel()
	h := newWatchHarness(t)
	other := newRawSession(t, shared, int32(sessionTimeout.Milliseconds()))
	gz := connect(t, shared, sessionTimeout)
	r := testRoot(t, gz)
	h.watch(t, jute.OpExists, r+"/x", jute.ErrNoNode)
	z := h.mutate(t, jute.OpCreate, create(r+"/x"))
	h.expect(t, []rawEvent{{z, jute.EventNodeCreated, r + "/x"}})
	other.ping()
	if len(other.Events) != 0 {
		t.Errorf("unrelated session got %v", other.Events)
	}
}

// TestWatchReadFilter: since ZooKeeper 3.8.4/3.9.2 (CVE-2024-23944) a
// notification reaches only watchers with READ on the node (on the parent
// for NodeChildrenChanged). Debian's 3.8.0 package carries the fix too.
func TestWatchReadFilter(t *testing.T) {
	t.Parallel()
	h := newWatchHarness(t)
	gz := connect(t, shared, sessionTimeout)
	r := testRoot(t, gz)
	secret := []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "digest", ID: digestID("owner", "pw")}}}
	if err := h.m.writeRaw(encodeRequest(jute.XidAuth, jute.OpAuth, &jute.AuthPacket{Scheme: "digest", Auth: []byte("owner:pw")})); err != nil {
		t.Fatal(err)
	}
	if rep := h.m.recv(); rep.Hdr.Err != jute.OK {
		t.Fatalf("auth: %+v", rep.Hdr)
	}
	h.watch(t, jute.OpExists, r+"/s", jute.ErrNoNode)
	h.mutate(t, jute.OpCreate, &jute.CreateRequest{Path: r + "/s", ACL: secret})
	h.mutate(t, jute.OpCreate, &jute.CreateRequest{Path: r + "/open", ACL: rawOpenACL})
	h.watch(t, jute.OpExists, r+"/s2", jute.ErrNoNode)
	h.expect(t, nil)
	// A readable node still notifies.
	h.watch(t, jute.OpGetData, r+"/open", jute.OK)
	zo := h.mutate(t, jute.OpSetData, set(r+"/open", "x"))
	h.expect(t, []rawEvent{{zo, jute.EventNodeDataChanged, r + "/open"}})
}
