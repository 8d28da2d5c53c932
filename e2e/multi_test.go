package e2e

import (
	"errors"
	"fmt"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/zkraft/zkraft/jute"
)

// TestMultiSuccess runs create, setData, check and delete in one multi: all
// apply under a single zxid and each op gets its own result.
func TestMultiSuccess(t *testing.T) {
	t.Parallel()
	gz := connect(t, shared, sessionTimeout)
	root := testRoot(t, gz)
	mustCreate(t, gz, root+"/old", nil, 0)
	mustCreate(t, gz, root+"/v", []byte("0"), 0)

	c := newRawSession(t, shared, int32(sessionTimeout.Milliseconds()))
	req := &jute.MultiRequest{Ops: []jute.MultiOp{
		{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: root + "/a", Data: []byte("a"), ACL: rawOpenACL}},
		{Type: jute.OpCreate2, Req: &jute.CreateRequest{Path: root + "/s-", ACL: rawOpenACL, Flags: jute.FlagPersistentSequential}},
		{Type: jute.OpSetData, Req: &jute.SetDataRequest{Path: root + "/v", Data: []byte("1"), Version: 0}},
		{Type: jute.OpCheck, Req: &jute.PathVersionRequest{Path: root + "/v", Version: 1}},
		{Type: jute.OpDelete, Req: &jute.PathVersionRequest{Path: root + "/old", Version: 0}},
		{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: root + "/a/b", ACL: rawOpenACL}},
	}}
	var resp jute.MultiResponse
	h := c.call(jute.OpMulti, req, &resp)
	if h.Err != jute.OK {
		t.Fatalf("multi: err %d", h.Err)
	}
	zxid := h.Zxid
	if len(resp.Results) != 6 {
		t.Fatalf("multi: %d results: %+v", len(resp.Results), resp.Results)
	}
	wantTypes := []jute.Op{jute.OpCreate, jute.OpCreate2, jute.OpSetData, jute.OpCheck, jute.OpDelete, jute.OpCreate}
	// ZooKeeper before 3.8.1 (ZOOKEEPER-4026) answered a create2 inside a
	// multi like a plain create: type 1 and the path only. The 3.8.0 oracle
	// still does; 3.9 answers type 15 with path and Stat.
	oldCreate2 := target == targetZookeeper
	if oldCreate2 {
		wantTypes[1] = jute.OpCreate
	}
	for i, r := range resp.Results {
		if r.Type != wantTypes[i] || r.Err != jute.OK {
			t.Errorf("result %d: type %d err %d, want type %d", i, r.Type, r.Err, wantTypes[i])
		}
	}
	if pr, ok := resp.Results[0].Resp.(*jute.PathRequest); !ok || pr.Path != root+"/a" {
		t.Errorf("create result = %#v", resp.Results[0].Resp)
	}
	// Creations so far under root: old, v, a -> suffix 3.
	if oldCreate2 {
		if pr, ok := resp.Results[1].Resp.(*jute.PathRequest); !ok || pr.Path != root+"/s-0000000003" {
			t.Errorf("create2 result (3.8.0) = %#v", resp.Results[1].Resp)
		}
	} else if c2, ok := resp.Results[1].Resp.(*jute.Create2Response); !ok || c2.Path != root+"/s-0000000003" || c2.Stat.Czxid != zxid {
		t.Errorf("create2 result = %#v (multi zxid %#x)", resp.Results[1].Resp, zxid)
	}
	if sr, ok := resp.Results[2].Resp.(*jute.StatResponse); !ok || sr.Stat.Version != 1 || sr.Stat.Mzxid != zxid {
		t.Errorf("setData result = %#v", resp.Results[2].Resp)
	}
	// One zxid for everything.
	for _, p := range []string{root + "/a", root + "/a/b", root + "/s-0000000003"} {
		if st := mustStat(t, gz, p); st.Czxid != zxid {
			t.Errorf("%s czxid %#x, want %#x", p, st.Czxid, zxid)
		}
	}
	// Children of root: 4 creates (old, v, a, s-) and 1 delete.
	if st := mustStat(t, gz, root); st.Pzxid != zxid || st.NumChildren != 3 || st.Cversion != 5 {
		t.Errorf("root after multi: %+v (zxid %#x)", st, zxid)
	}
	mustNotExist(t, gz, root+"/old")
	// Later writes get later zxids.
	h = c.call(jute.OpSetData, &jute.SetDataRequest{Path: root + "/v", Data: []byte("2"), Version: -1}, nil)
	if h.Zxid <= zxid {
		t.Errorf("write after multi: zxid %#x, want > %#x", h.Zxid, zxid)
	}
}

// TestMultiFailure checks all-or-nothing: a failing op reports its code,
// earlier ops report 0, later ops RuntimeInconsistency, and nothing applies.
func TestMultiFailure(t *testing.T) {
	t.Parallel()
	gz := connect(t, shared, sessionTimeout)
	root := testRoot(t, gz)
	mustCreate(t, gz, root+"/v", []byte("0"), 0)
	before := mustStat(t, gz, root)

	c := newRawSession(t, shared, int32(sessionTimeout.Milliseconds()))
	cases := []struct {
		name    string
		ops     []jute.MultiOp
		failAt  int
		errCode jute.ErrCode
	}{
		{"check bad version", []jute.MultiOp{
			{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: root + "/a", ACL: rawOpenACL}},
			{Type: jute.OpSetData, Req: &jute.SetDataRequest{Path: root + "/v", Data: []byte("x"), Version: -1}},
			{Type: jute.OpCheck, Req: &jute.PathVersionRequest{Path: root + "/v", Version: 7}},
			{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: root + "/b", ACL: rawOpenACL}},
		}, 2, jute.ErrBadVersion},
		{"check missing node", []jute.MultiOp{
			{Type: jute.OpCheck, Req: &jute.PathVersionRequest{Path: root + "/nope", Version: -1}},
			{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: root + "/a", ACL: rawOpenACL}},
		}, 0, jute.ErrNoNode},
		{"create then duplicate", []jute.MultiOp{
			{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: root + "/a", ACL: rawOpenACL, Flags: jute.FlagPersistentSequential}},
			{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: root + "/b", ACL: rawOpenACL}},
			{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: root + "/b", ACL: rawOpenACL}},
		}, 2, jute.ErrNodeExists},
		{"delete non-empty", []jute.MultiOp{
			{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: root + "/v/c", ACL: rawOpenACL}},
			{Type: jute.OpDelete, Req: &jute.PathVersionRequest{Path: root + "/v", Version: -1}},
		}, 1, jute.ErrNotEmpty},
		{"setData missing", []jute.MultiOp{
			{Type: jute.OpSetData, Req: &jute.SetDataRequest{Path: root + "/nope", Version: -1}},
		}, 0, jute.ErrNoNode},
		{"invalid ACL", []jute.MultiOp{
			{Type: jute.OpDelete, Req: &jute.PathVersionRequest{Path: root + "/v", Version: -1}},
			{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: root + "/a", ACL: nil}},
		}, 1, jute.ErrInvalidACL},
	}
	for _, tc := range cases {
		var resp jute.MultiResponse
		h := c.call(jute.OpMulti, &jute.MultiRequest{Ops: tc.ops}, &resp)
		if h.Err != jute.OK {
			t.Errorf("%s: reply header err %d, want 0", tc.name, h.Err)
			continue
		}
		if len(resp.Results) != len(tc.ops) {
			t.Errorf("%s: %d results, want %d", tc.name, len(resp.Results), len(tc.ops))
			continue
		}
		for i, r := range resp.Results {
			want := jute.OK
			switch {
			case i == tc.failAt:
				want = tc.errCode
			case i > tc.failAt:
				want = jute.ErrRuntimeInconsistency
			}
			if r.Type != jute.OpError || r.Err != want {
				t.Errorf("%s: result %d = type %d err %d, want type -1 err %d", tc.name, i, r.Type, r.Err, want)
			}
		}
	}
	// Nothing applied, and the failed sequential create consumed no number.
	if st := mustStat(t, gz, root); st != before {
		t.Errorf("root changed by failed multis: %+v, was %+v", st, before)
	}
	if data, st, _ := gz.Get(root + "/v"); string(data) != "0" || st.Version != 0 || st.NumChildren != 0 {
		t.Errorf("/v changed by failed multis: %q %+v", data, st)
	}
	if got := mustCreate(t, gz, root+"/s", nil, zk.FlagSequence); got != root+"/s0000000001" {
		t.Errorf("sequential after failed multis = %q, want %s/s0000000001", got, root)
	}
}

// TestMultiGoZookeeper runs multi through go-zookeeper's API.
func TestMultiGoZookeeper(t *testing.T) {
	t.Parallel()
	c := connect(t, shared, sessionTimeout)
	root := testRoot(t, c)
	res, err := c.Multi(
		&zk.CreateRequest{Path: root + "/x", Data: []byte("1"), Acl: openACL},
		&zk.SetDataRequest{Path: root + "/x", Data: []byte("2"), Version: 0},
		&zk.CheckVersionRequest{Path: root + "/x", Version: 1},
	)
	if err != nil || len(res) != 3 || res[0].String != root+"/x" || res[1].Stat == nil || res[1].Stat.Version != 1 {
		t.Fatalf("multi = %+v, %v", res, err)
	}
	res, err = c.Multi(
		&zk.DeleteRequest{Path: root + "/x", Version: 1},
		&zk.CheckVersionRequest{Path: root + "/x", Version: 1},
	)
	if !errors.Is(err, zk.ErrNoNode) || len(res) != 2 {
		t.Errorf("delete then check = %+v, %v; want no node", res, err)
	}
	if data, _, err := c.Get(root + "/x"); err != nil || string(data) != "2" {
		t.Errorf("after failed multi: %q %v", data, err)
	}
	// An empty multi succeeds with no results.
	res, err = c.Multi()
	if err != nil || len(res) != 0 {
		t.Errorf("empty multi = %+v, %v", res, err)
	}
}

// TestCheckOutsideMulti sends check (13) as a standalone op. The
// specification (3.9) answers Unimplemented and closes the connection. The
// 3.8.0 oracle silently drops the request (no reply at all) and answers
// the following requests, which leaves a client waiting forever.
func TestCheckOutsideMulti(t *testing.T) {
	t.Parallel()
	c := newRawSession(t, shared, int32(sessionTimeout.Milliseconds()))
	if err := c.writeRaw(encodeRequest(1, jute.OpCheck, &jute.PathVersionRequest{Path: "/", Version: -1})); err != nil {
		t.Fatal(err)
	}
	if target == targetZookeeper {
		xid := c.send(jute.OpExists, &jute.PathWatchRequest{Path: "/"})
		if r := c.recv(); r.Hdr.Xid != xid || r.Hdr.Err != jute.OK {
			t.Errorf("3.8.0: reply after dropped check = %+v, want xid %d", r.Hdr, xid)
		}
		return
	}
	got := c.expectClosed()
	if len(got) != 1 || got[0].Hdr.Xid != 1 || got[0].Hdr.Err != jute.ErrUnimplemented {
		t.Errorf("standalone check: replies %s, want one xid 1 err -6", fmt.Sprint(got))
	}
}

// TestMultiCreateShapes: inside a multi, ZooKeeper derives a create's
// opcode from its flags as well as from the wire: CONTAINER flags make a
// container and a Stat-carrying result (type 15) whatever the opcode, and
// a createTTL without TTL flags is a plain create (type 1, its TTL
// dropped). Flags a create, create2 or createContainer cannot carry (TTL
// modes, and in 3.9 unknown flags), or a read op anywhere in the multi,
// fail the whole request with MarshallingError. zkraft answers as 3.9;
// the 3.8.0 oracle still answers create2 and createContainer with plain
// flags with type 1 (ZOOKEEPER-4026) and unknown flags op by op.
func TestMultiCreateShapes(t *testing.T) {
	t.Parallel()
	gz := connect(t, shared, sessionTimeout)
	root := testRoot(t, gz)
	c := newRawSession(t, shared, int32(sessionTimeout.Milliseconds()))
	create := func(op jute.Op, name string, flags int32, ttl int64) jute.MultiOp {
		return jute.MultiOp{Type: op, Req: &jute.CreateRequest{Path: root + "/" + name, ACL: rawOpenACL, Flags: flags, TTL: ttl, HasTTL: op == jute.OpCreateTTL}}
	}
	type answer struct {
		whole jute.ErrCode // the reply header's code
		typ   jute.Op      // the single result's type when whole is OK
	}
	v38 := target == targetZookeeper
	for _, tc := range []struct {
		op     jute.MultiOp
		want   answer
		want38 *answer // the 3.8.0 oracle's answer where it differs
		reaped bool    // a container: removed once its child goes
	}{
		{op: create(jute.OpCreateContainer, "c0", 0, 0), want: answer{jute.OK, jute.OpCreate2}, want38: &answer{jute.OK, jute.OpCreate}},
		{op: create(jute.OpCreate2, "p0", 0, 0), want: answer{jute.OK, jute.OpCreate2}, want38: &answer{jute.OK, jute.OpCreate}},
		{op: create(jute.OpCreate, "k4", 4, 0), want: answer{jute.OK, jute.OpCreate2}, reaped: true},
		{op: create(jute.OpCreateTTL, "t4", 4, 100), want: answer{jute.OK, jute.OpCreate2}, reaped: true},
		{op: create(jute.OpCreateTTL, "t0", 0, 100), want: answer{jute.OK, jute.OpCreate}},
		{op: create(jute.OpCreate, "x5", 5, 0), want: answer{jute.ErrMarshallingError, 0}},
		{op: create(jute.OpCreateContainer, "x6", 6, 0), want: answer{jute.ErrMarshallingError, 0}},
		{op: create(jute.OpCreate, "x7", 7, 0), want: answer{jute.ErrMarshallingError, 0}, want38: &answer{jute.OK, jute.OpError}},
		{op: jute.MultiOp{Type: jute.OpGetData, Req: &jute.PathWatchRequest{Path: root}}, want: answer{jute.ErrMarshallingError, 0}},
	} {
		want := tc.want
		if v38 && tc.want38 != nil {
			want = *tc.want38
		}
		var resp jute.MultiResponse
		h := c.call(jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{tc.op}}, &resp)
		if h.Err != want.whole {
			t.Errorf("multi [op %d %+v]: err %d, want %d", tc.op.Type, tc.op.Req, h.Err, want.whole)
			continue
		}
		if want.whole != jute.OK {
			continue
		}
		if len(resp.Results) != 1 || resp.Results[0].Type != want.typ {
			t.Errorf("multi [op %d %+v]: results %+v, want one of type %d", tc.op.Type, tc.op.Req, resp.Results, want.typ)
			continue
		}
		if !tc.reaped {
			continue
		}
		// A container goes once it has had a child and is empty again.
		path := tc.op.Req.(*jute.CreateRequest).Path
		mustCreate(t, gz, path+"/child", nil, 0)
		if err := gz.Delete(path+"/child", -1); err != nil {
			t.Fatal(err)
		}
		waitGone(t, gz, path, reapWait)
	}
	// A read op after a write: nothing is applied.
	h := c.call(jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{
		create(jute.OpCreate, "w", 0, 0),
		{Type: jute.OpGetChildren, Req: &jute.PathWatchRequest{Path: root}},
	}}, nil)
	if h.Err != jute.ErrMarshallingError {
		t.Errorf("multi [create, getChildren]: err %d, want %d", h.Err, jute.ErrMarshallingError)
	}
	if got := c.callErr(jute.OpExists, &jute.PathWatchRequest{Path: root + "/w"}); got != jute.ErrNoNode {
		t.Errorf("exists %s/w after the failed multi: %d, want %d", root, got, jute.ErrNoNode)
	}
}
