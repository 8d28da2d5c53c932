package e2e

// Operations added in ZooKeeper 3.5-3.7 (persistent watches, watch
// management, getEphemerals, getAllChildrenNumber, whoAmI, multiRead,
// setWatches), and the error codes of reads on malformed paths. All are
// driven with raw frames: go-zookeeper v1.0.4 has no API for them.

import (
	"fmt"
	"sort"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/zkraft/zkraft/jute"
)

// TestBadPathsReads: reads do not validate paths (a malformed path simply
// names no node), except exists, which refuses a NUL byte; sync echoes any
// path; setACL validates fully.
func TestBadPathsReads(t *testing.T) {
	t.Parallel()
	gz := connect(t, shared, sessionTimeout)
	root := testRoot(t, gz)
	mustCreate(t, gz, root+"/a", nil, 0)
	c := newRawSession(t, shared, int32(sessionTimeout.Milliseconds()))
	for _, p := range []string{"noslash", root + "/a/", root + "//a", root + "/./a", root + "/a/.", "/nul\x00"} {
		for _, op := range []jute.Op{jute.OpExists, jute.OpGetData, jute.OpGetChildren, jute.OpGetChildren2} {
			want := jute.ErrNoNode
			if op == jute.OpExists && p == "/nul\x00" {
				want = jute.ErrBadArguments
			}
			if got := c.callErr(op, &jute.PathWatchRequest{Path: p}); got != want {
				t.Errorf("op %d %q: err %d, want %d", op, p, got, want)
			}
		}
		if got := c.callErr(jute.OpGetACL, &jute.PathRequest{Path: p}); got != jute.ErrNoNode {
			t.Errorf("getACL %q: err %d, want %d", p, got, jute.ErrNoNode)
		}
		var sr jute.PathRequest
		if h := c.call(jute.OpSync, &jute.PathRequest{Path: p}, &sr); h.Err != jute.OK || sr.Path != p {
			t.Errorf("sync %q: err %d path %q", p, h.Err, sr.Path)
		}
		if got := c.callErr(jute.OpSetACL, &jute.SetACLRequest{Path: p, ACL: rawOpenACL, Version: -1}); got != jute.ErrBadArguments {
			t.Errorf("setACL %q: err %d, want %d", p, got, jute.ErrBadArguments)
		}
	}
}

// TestPersistentWatches covers addWatch in both modes: watches stay after
// firing; recursive ones cover descendants and never report
// NodeChildrenChanged.
func TestPersistentWatches(t *testing.T) {
	t.Parallel()
	h := newWatchHarness(t)
	gz := connect(t, shared, sessionTimeout)
	r := testRoot(t, gz)
	h.mutate(t, jute.OpCreate, create(r+"/p"))
	h.mutate(t, jute.OpCreate, create(r+"/tree"))

	var er jute.ErrorResponse
	for _, w := range []struct {
		path string
		mode int32
	}{{r + "/p", jute.AddWatchPersistent}, {r + "/tree", jute.AddWatchPersistentRecursive}, {r + "/later", jute.AddWatchPersistent}} {
		if hdr := h.w.call(jute.OpAddWatch, &jute.PathTypeRequest{Path: w.path, Type: w.mode}, &er); hdr.Err != jute.OK || er.Err != jute.OK {
			t.Fatalf("addWatch %s mode %d: %+v %+v", w.path, w.mode, hdr, er)
		}
	}
	z1 := h.mutate(t, jute.OpSetData, set(r+"/p", "1"))
	z2 := h.mutate(t, jute.OpSetData, set(r+"/p", "2"))
	z3 := h.mutate(t, jute.OpCreate, create(r+"/p/c"))
	z4 := h.mutate(t, jute.OpCreate, create(r+"/tree/a"))
	z5 := h.mutate(t, jute.OpCreate, create(r+"/tree/a/b"))
	z6 := h.mutate(t, jute.OpSetData, set(r+"/tree/a/b", "x"))
	z7 := h.mutate(t, jute.OpDelete, del(r+"/tree/a/b"))
	z8 := h.mutate(t, jute.OpCreate, create(r+"/later"))
	z9 := h.mutate(t, jute.OpSetData, set(r+"/tree", "t"))
	h.expect(t, []rawEvent{
		{z1, jute.EventNodeDataChanged, r + "/p"},
		{z2, jute.EventNodeDataChanged, r + "/p"},
		{z3, jute.EventNodeChildrenChanged, r + "/p"},
		{z4, jute.EventNodeCreated, r + "/tree/a"},
		{z5, jute.EventNodeCreated, r + "/tree/a/b"},
		{z6, jute.EventNodeDataChanged, r + "/tree/a/b"},
		{z7, jute.EventNodeDeleted, r + "/tree/a/b"},
		{z8, jute.EventNodeCreated, r + "/later"},
		{z9, jute.EventNodeDataChanged, r + "/tree"},
	})
	// Removing the persistent watch stops it.
	if got := h.w.callErr(jute.OpRemoveWatches, &jute.PathTypeRequest{Path: r + "/p", Type: jute.WatcherAny}); got != jute.OK {
		t.Errorf("removeWatches persistent: %d", got)
	}
	h.mutate(t, jute.OpSetData, set(r+"/p", "3"))
	h.expect(t, nil)
}

// TestCheckRemoveWatches covers checkWatches and removeWatches.
func TestCheckRemoveWatches(t *testing.T) {
	t.Parallel()
	h := newWatchHarness(t)
	gz := connect(t, shared, sessionTimeout)
	r := testRoot(t, gz)
	h.mutate(t, jute.OpCreate, create(r+"/n"))
	pt := func(path string, typ int32) *jute.PathTypeRequest {
		return &jute.PathTypeRequest{Path: path, Type: typ}
	}

	for _, typ := range []int32{jute.WatcherChildren, jute.WatcherData, jute.WatcherAny} {
		if got := h.w.callErr(jute.OpCheckWatches, pt(r+"/n", typ)); got != jute.ErrNoWatcher {
			t.Errorf("checkWatches type %d without watches: %d, want %d", typ, got, jute.ErrNoWatcher)
		}
		if got := h.w.callErr(jute.OpRemoveWatches, pt(r+"/n", typ)); got != jute.ErrNoWatcher {
			t.Errorf("removeWatches type %d without watches: %d, want %d", typ, got, jute.ErrNoWatcher)
		}
	}
	h.watch(t, jute.OpGetData, r+"/n", jute.OK)
	if got := h.w.callErr(jute.OpCheckWatches, pt(r+"/n", jute.WatcherData)); got != jute.OK {
		t.Errorf("checkWatches data: %d", got)
	}
	if got := h.w.callErr(jute.OpCheckWatches, pt(r+"/n", jute.WatcherChildren)); got != jute.ErrNoWatcher {
		t.Errorf("checkWatches children with a data watch only: %d", got)
	}
	if got := h.w.callErr(jute.OpCheckWatches, pt(r+"/n", jute.WatcherAny)); got != jute.OK {
		t.Errorf("checkWatches any: %d", got)
	}
	// (Whether another session's watch counts is left open: the 3.8.0
	// oracle answers 0 to checkWatches from a session that has none there.)
	if got := h.w.callErr(jute.OpRemoveWatches, pt(r+"/n", jute.WatcherData)); got != jute.OK {
		t.Errorf("removeWatches data: %d", got)
	}
	h.mutate(t, jute.OpSetData, set(r+"/n", "x"))
	h.expect(t, nil)
	if got := h.w.callErr(jute.OpCheckWatches, pt(r+"/n", jute.WatcherData)); got != jute.ErrNoWatcher {
		t.Errorf("checkWatches after remove: %d", got)
	}
	// A child watch removed by type Any.
	h.watch(t, jute.OpGetChildren, r+"/n", jute.OK)
	if got := h.w.callErr(jute.OpRemoveWatches, pt(r+"/n", jute.WatcherAny)); got != jute.OK {
		t.Errorf("removeWatches any: %d", got)
	}
	h.mutate(t, jute.OpCreate, create(r+"/n/c"))
	h.expect(t, nil)
}

// TestGetEphemerals lists the caller's own ephemerals by string prefix.
func TestGetEphemerals(t *testing.T) {
	t.Parallel()
	gz := connect(t, shared, sessionTimeout)
	root := testRoot(t, gz)
	mustCreate(t, gz, root+"/sub", nil, 0)
	mustCreate(t, gz, root+"/mine-by-other", nil, 1 /* ephemeral, other session */)
	c := newRawSession(t, shared, int32(sessionTimeout.Milliseconds()))
	var mine []string
	for _, p := range []string{root + "/e1", root + "/e2", root + "/sub/e3", root + "/subway"} {
		if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: p, ACL: rawOpenACL, Flags: jute.FlagEphemeral}, nil); h.Err != jute.OK {
			t.Fatal(h.Err)
		}
		mine = append(mine, p)
	}
	for _, tc := range []struct {
		prefix string
		want   []string
	}{
		{"/", mine},
		{"", mine},
		{root, mine},
		{root + "/sub", []string{root + "/sub/e3", root + "/subway"}},
		{root + "/sub/", []string{root + "/sub/e3"}},
		{root + "/e", []string{root + "/e1", root + "/e2"}},
		{root + "/nothing", nil},
	} {
		var sr jute.StringsResponse
		if h := c.call(jute.OpGetEphemerals, &jute.PathRequest{Path: tc.prefix}, &sr); h.Err != jute.OK {
			t.Errorf("getEphemerals %q: err %d", tc.prefix, h.Err)
			continue
		}
		got := sorted(sr.Strings)
		if fmt.Sprint(got) != fmt.Sprint(sorted(tc.want)) {
			t.Errorf("getEphemerals %q = %v, want %v", tc.prefix, got, sorted(tc.want))
		}
	}
}

// TestGetAllChildrenNumber counts every descendant.
func TestGetAllChildrenNumber(t *testing.T) {
	t.Parallel()
	gz := connect(t, shared, sessionTimeout)
	root := testRoot(t, gz)
	for _, p := range []string{"/a", "/a/b", "/a/b/c", "/a/d", "/e"} {
		mustCreate(t, gz, root+p, nil, 0)
	}
	c := newRawSession(t, shared, int32(sessionTimeout.Milliseconds()))
	for p, want := range map[string]int32{root: 5, root + "/a": 3, root + "/a/b/c": 0} {
		var ir jute.IntResponse
		if h := c.call(jute.OpGetAllChildrenNumber, &jute.PathRequest{Path: p}, &ir); h.Err != jute.OK || ir.N != want {
			t.Errorf("getAllChildrenNumber %s = %d (err %d), want %d", p, ir.N, h.Err, want)
		}
	}
	if got := c.callErr(jute.OpGetAllChildrenNumber, &jute.PathRequest{Path: root + "/nope"}); got != jute.ErrNoNode {
		t.Errorf("getAllChildrenNumber missing: %d", got)
	}
}

// TestWhoAmI lists the connection's identities.
func TestWhoAmI(t *testing.T) {
	t.Parallel()
	c := newRawSession(t, shared, int32(sessionTimeout.Milliseconds()))
	ids := func() []string {
		var resp jute.WhoAmIResponse
		if h := c.call(jute.OpWhoAmI, nil, &resp); h.Err != jute.OK {
			t.Fatalf("whoAmI: %d", h.Err)
		}
		var out []string
		for _, ci := range resp.ClientInfo {
			out = append(out, ci.AuthScheme+"="+ci.User)
		}
		sort.Strings(out)
		return out
	}
	if got := fmt.Sprint(ids()); got != "[ip=127.0.0.1]" {
		t.Errorf("whoAmI = %s, want [ip=127.0.0.1]", got)
	}
	if err := c.writeRaw(encodeRequest(jute.XidAuth, jute.OpAuth, &jute.AuthPacket{Scheme: "digest", Auth: []byte("alice:pw")})); err != nil {
		t.Fatal(err)
	}
	if r := c.recv(); r.Hdr.Xid != jute.XidAuth || r.Hdr.Err != jute.OK {
		t.Fatalf("auth: %+v", r.Hdr)
	}
	if got := fmt.Sprint(ids()); got != "[digest=alice ip=127.0.0.1]" {
		t.Errorf("whoAmI after digest auth = %s, want [digest=alice ip=127.0.0.1]", got)
	}
}

// TestMultiRead evaluates getData and getChildren independently.
func TestMultiRead(t *testing.T) {
	t.Parallel()
	gz := connect(t, shared, sessionTimeout)
	root := testRoot(t, gz)
	mustCreate(t, gz, root+"/a", []byte("A"), 0)
	mustCreate(t, gz, root+"/a/x", nil, 0)
	c := newRawSession(t, shared, int32(sessionTimeout.Milliseconds()))
	var resp jute.MultiResponse
	h := c.call(jute.OpMultiRead, &jute.MultiRequest{Ops: []jute.MultiOp{
		{Type: jute.OpGetData, Req: &jute.PathWatchRequest{Path: root + "/a"}},
		{Type: jute.OpGetChildren, Req: &jute.PathWatchRequest{Path: root + "/nope"}},
		{Type: jute.OpGetChildren, Req: &jute.PathWatchRequest{Path: root + "/a"}},
		{Type: jute.OpGetData, Req: &jute.PathWatchRequest{Path: root + "/nope"}},
	}}, &resp)
	if h.Err != jute.OK || len(resp.Results) != 4 {
		t.Fatalf("multiRead: err %d, %d results", h.Err, len(resp.Results))
	}
	if gd, ok := resp.Results[0].Resp.(*jute.GetDataResponse); !ok || string(gd.Data) != "A" || gd.Stat.NumChildren != 1 {
		t.Errorf("result 0 = %+v", resp.Results[0])
	}
	if r := resp.Results[1]; r.Type != jute.OpError || r.Err != jute.ErrNoNode {
		t.Errorf("result 1 = %+v, want error -101", r)
	}
	if sr, ok := resp.Results[2].Resp.(*jute.StringsResponse); !ok || fmt.Sprint(sr.Strings) != "[x]" {
		t.Errorf("result 2 = %+v", resp.Results[2])
	}
	if r := resp.Results[3]; r.Type != jute.OpError || r.Err != jute.ErrNoNode {
		t.Errorf("result 3 = %+v, want error -101", r)
	}
}

// TestSetWatchesRaw re-arms watches on a resumed connection: changes after
// relativeZxid fire at once, unchanged nodes are re-armed.
func TestSetWatchesRaw(t *testing.T) {
	t.Parallel()
	gz := connect(t, shared, sessionTimeout)
	root := testRoot(t, gz)
	for _, p := range []string{"/same", "/changed", "/deleted", "/kids"} {
		mustCreate(t, gz, root+p, nil, 0)
	}
	first := newRawSession(t, shared, 10000)
	rel := first.ping()
	if _, err := gz.Set(root+"/changed", []byte("x"), -1); err != nil {
		t.Fatal(err)
	}
	if err := gz.Delete(root+"/deleted", -1); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, gz, root+"/kids/k", nil, 0)
	mustCreate(t, gz, root+"/born", nil, 0)

	c := dialRaw(t, shared)
	c.handshake(&jute.ConnectRequest{LastZxidSeen: rel, TimeOut: 10000, SessionID: first.SessionID, Passwd: first.Passwd, HasReadOnly: true})
	sw := &jute.SetWatches{
		RelativeZxid: rel,
		DataWatches:  []string{root + "/same", root + "/changed", root + "/deleted"},
		ExistWatches: []string{root + "/born", root + "/unborn"},
		ChildWatches: []string{root + "/kids", root + "/same"},
	}
	if err := c.writeRaw(encodeRequest(jute.XidSetWatches, jute.OpSetWatches, sw)); err != nil {
		t.Fatal(err)
	}
	r := c.recv()
	if r.Hdr.Xid != jute.XidSetWatches || r.Hdr.Err != jute.OK {
		t.Fatalf("setWatches reply %+v", r.Hdr)
	}
	c.ping()
	var got []string
	for _, ev := range c.Events {
		got = append(got, fmt.Sprintf("%d %s", ev.Type, ev.Path))
	}
	sort.Strings(got)
	want := []string{
		fmt.Sprintf("%d %s", jute.EventNodeCreated, root+"/born"),
		fmt.Sprintf("%d %s", jute.EventNodeDeleted, root+"/deleted"),
		fmt.Sprintf("%d %s", jute.EventNodeDataChanged, root+"/changed"),
		fmt.Sprintf("%d %s", jute.EventNodeChildrenChanged, root+"/kids"),
	}
	sort.Strings(want)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("catch-up events = %v, want %v", got, want)
	}
	// The re-armed watches fire on the next change.
	c.Events = nil
	if _, err := gz.Set(root+"/same", []byte("now"), -1); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, gz, root+"/unborn", nil, 0)
	mustCreate(t, gz, root+"/same/k", nil, 0)
	c.ping()
	got = nil
	for _, ev := range c.Events {
		got = append(got, fmt.Sprintf("%d %s", ev.Type, ev.Path))
	}
	want = []string{
		fmt.Sprintf("%d %s", jute.EventNodeDataChanged, root+"/same"),
		fmt.Sprintf("%d %s", jute.EventNodeCreated, root+"/unborn"),
		fmt.Sprintf("%d %s", jute.EventNodeChildrenChanged, root+"/same"),
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("re-armed events = %v, want %v", got, want)
	}
}

// TestSetWatches2Raw re-arms persistent and recursive watches on a resumed
// connection: no catch-up events, and they fire on later changes.
func TestSetWatches2Raw(t *testing.T) {
	t.Parallel()
	h := newWatchHarness(t)
	gz := connect(t, shared, sessionTimeout)
	r := testRoot(t, gz)
	rel := h.w.ping()
	h.mutate(t, jute.OpCreate, create(r+"/x"))
	h.mutate(t, jute.OpCreate, create(r+"/tree"))

	c := dialRaw(t, shared)
	c.handshake(&jute.ConnectRequest{LastZxidSeen: rel, TimeOut: int32(sessionTimeout.Milliseconds()), SessionID: h.w.SessionID, Passwd: h.w.Passwd, HasReadOnly: true})
	sw := &jute.SetWatches{RelativeZxid: rel, V2: true, PersistentWatches: []string{r + "/x"}, PersistentRecursive: []string{r + "/tree"}}
	if err := c.writeRaw(encodeRequest(jute.XidSetWatches, jute.OpSetWatches2, sw)); err != nil {
		t.Fatal(err)
	}
	if rep := c.recv(); rep.Hdr.Xid != jute.XidSetWatches || rep.Hdr.Err != jute.OK || len(rep.Body) != 0 {
		t.Fatalf("setWatches2 reply %+v %x", rep.Hdr, rep.Body)
	}
	c.ping()
	if len(c.Events) != 0 {
		t.Errorf("persistent watches got catch-up events %v", c.Events)
	}
	z1 := h.mutate(t, jute.OpSetData, set(r+"/x", "1"))
	z2 := h.mutate(t, jute.OpCreate, create(r+"/x/y"))
	z3 := h.mutate(t, jute.OpCreate, create(r+"/tree/a"))
	z4 := h.mutate(t, jute.OpSetData, set(r+"/x", "2"))
	c.ping()
	want := []rawEvent{
		{z1, jute.EventNodeDataChanged, r + "/x"},
		{z2, jute.EventNodeChildrenChanged, r + "/x"},
		{z3, jute.EventNodeCreated, r + "/tree/a"},
		{z4, jute.EventNodeDataChanged, r + "/x"},
	}
	if len(c.Events) != len(want) {
		t.Fatalf("events %v, want %v", c.Events, want)
	}
	for i, ev := range c.Events {
		if ev.Type != want[i].Type || ev.Path != want[i].Path {
			t.Fatalf("events %v, want %v", c.Events, want)
		}
		checkEventZxid(t, ev, want[i].Zxid)
	}
}

// TestReconfigStandalone: reconfig is refused with ReconfigDisabled (-123)
// when reconfigEnabled is off, and /zookeeper/config is unchanged.
func TestReconfigStandalone(t *testing.T) {
	t.Parallel()
	c := connect(t, shared, sessionTimeout)
	_, err := c.IncrementalReconfig([]string{"server.9=127.0.0.1:1:2;3"}, nil, -1)
	wantErr(t, "reconfig", err, zk.ErrReconfigDisabled)
	if data, _, err := c.Get("/zookeeper/config"); err != nil || len(data) != 0 {
		t.Errorf("/zookeeper/config after refused reconfig = %q, %v", data, err)
	}
}

// TestWatchOpsOracleErrors: the answers ZooKeeper gives to watch
// management requests it cannot interpret. Its FinalRequestProcessor turns
// an exception into MarshallingError (-5) and keeps the connection: a
// watcher type outside 1-5 (WatcherType.fromInt) and an addWatch mode
// other than 0 and 1. A checkWatches on a path with no '/' at all is
// NoWatcher in 3.9; the 3.8.0 oracle throws there too (its
// containsWatcher took the path's parent before looking).
func TestWatchOpsOracleErrors(t *testing.T) {
	t.Parallel()
	c := newRawSession(t, shared, int32(sessionTimeout.Milliseconds()))
	gz := connect(t, shared, sessionTimeout)
	r := testRoot(t, gz)
	pt := func(path string, typ int32) *jute.PathTypeRequest {
		return &jute.PathTypeRequest{Path: path, Type: typ}
	}
	slashless := jute.ErrNoWatcher
	if target == targetZookeeper {
		slashless = jute.ErrMarshallingError
	}
	for _, tc := range []struct {
		op   jute.Op
		req  *jute.PathTypeRequest
		want jute.ErrCode
	}{
		{jute.OpCheckWatches, pt("a", jute.WatcherChildren), slashless},
		{jute.OpCheckWatches, pt("a", jute.WatcherData), slashless},
		{jute.OpCheckWatches, pt("noslash", jute.WatcherAny), slashless},
		{jute.OpCheckWatches, pt("", jute.WatcherAny), jute.ErrNoWatcher},
		{jute.OpCheckWatches, pt(r+"/./x", jute.WatcherData), jute.ErrNoWatcher},
		{jute.OpRemoveWatches, pt("a", jute.WatcherData), jute.ErrNoWatcher},
		{jute.OpCheckWatches, pt(r, 0), jute.ErrMarshallingError},
		{jute.OpCheckWatches, pt(r, 6), jute.ErrMarshallingError},
		{jute.OpRemoveWatches, pt(r, 0), jute.ErrMarshallingError},
		{jute.OpRemoveWatches, pt(r, -1), jute.ErrMarshallingError},
		{jute.OpAddWatch, pt(r, 2), jute.ErrMarshallingError},
		{jute.OpAddWatch, pt(r, -1), jute.ErrMarshallingError},
	} {
		if got := c.callErr(tc.op, tc.req); got != tc.want {
			t.Errorf("op %d %q type %d: err %d, want %d", tc.op, tc.req.Path, tc.req.Type, got, tc.want)
		}
	}
	// The session carries on.
	if got := c.callErr(jute.OpExists, &jute.PathWatchRequest{Path: r}); got != jute.OK {
		t.Fatalf("exists after the errors: %d", got)
	}
}

// TestMultiReadOracleDetails: ZooKeeper's multiRead never sets a watch
// (MultiOperationRecord keeps only the path of a getData or getChildren,
// whatever the watch flag says), and one holding any other op (here a
// create, which decodes as a multi op) fails as a whole with
// MarshallingError, FinalRequestProcessor throwing at that op; the create
// is not applied.
func TestMultiReadOracleDetails(t *testing.T) {
	t.Parallel()
	gz := connect(t, shared, sessionTimeout)
	root := testRoot(t, gz)
	c := newRawSession(t, shared, int32(sessionTimeout.Milliseconds()))
	pt := func(typ int32) *jute.PathTypeRequest { return &jute.PathTypeRequest{Path: root, Type: typ} }
	var resp jute.MultiResponse
	h := c.call(jute.OpMultiRead, &jute.MultiRequest{Ops: []jute.MultiOp{
		{Type: jute.OpGetData, Req: &jute.PathWatchRequest{Path: root, Watch: true}},
		{Type: jute.OpGetChildren, Req: &jute.PathWatchRequest{Path: root, Watch: true}},
	}}, &resp)
	if h.Err != jute.OK || len(resp.Results) != 2 {
		t.Fatalf("multiRead: err %d, %d results", h.Err, len(resp.Results))
	}
	if got := c.callErr(jute.OpCheckWatches, pt(jute.WatcherAny)); got != jute.ErrNoWatcher {
		t.Errorf("after multiRead with watch flags: checkWatches %d, want %d (no watch)", got, jute.ErrNoWatcher)
	}

	h = c.call(jute.OpMultiRead, &jute.MultiRequest{Ops: []jute.MultiOp{
		{Type: jute.OpGetData, Req: &jute.PathWatchRequest{Path: root}},
		{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: root + "/x", ACL: rawOpenACL}},
		{Type: jute.OpGetChildren, Req: &jute.PathWatchRequest{Path: root}},
	}}, nil)
	if h.Err != jute.ErrMarshallingError {
		t.Fatalf("multiRead with a create: err %d, want %d", h.Err, jute.ErrMarshallingError)
	}
	if got := c.callErr(jute.OpExists, &jute.PathWatchRequest{Path: root + "/x"}); got != jute.ErrNoNode {
		t.Errorf("exists %s/x: %d, want %d", root, got, jute.ErrNoNode)
	}
}
