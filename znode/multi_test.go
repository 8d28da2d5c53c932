package znode

import (
	"bytes"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

func TestMultiSuccess(t *testing.T) {
	h := newHarness(t, Options{ExtendedTypes: true})
	h.mustCreate("/m", nil, 0)
	h.mustCreate("/m/old", nil, 0)
	r := h.write(jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{
		{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: "/m/s", ACL: openACL, Flags: 2}},
		{Type: jute.OpCreate2, Req: &jute.CreateRequest{Path: "/m/s", ACL: openACL, Flags: 2}},
		{Type: jute.OpCreateContainer, Req: &jute.CreateRequest{Path: "/m/c", ACL: openACL, Flags: 4}},
		{Type: jute.OpCreateTTL, Req: &jute.CreateRequest{Path: "/m/t", ACL: openACL, Flags: 5, TTL: 9, HasTTL: true}},
		{Type: jute.OpSetData, Req: &jute.SetDataRequest{Path: "/m", Data: []byte("d"), Version: 0}},
		{Type: jute.OpCheck, Req: &jute.PathVersionRequest{Path: "/m", Version: 1}},
		{Type: jute.OpDelete, Req: &jute.PathVersionRequest{Path: "/m/old", Version: -1}},
	}})
	if r.Err != jute.OK {
		t.Fatal(r.Err)
	}
	mr := r.Resp.(*jute.MultiResponse)
	wantTypes := []jute.Op{jute.OpCreate, jute.OpCreate2, jute.OpCreate2, jute.OpCreate2, jute.OpSetData, jute.OpCheck, jute.OpDelete}
	if len(mr.Results) != len(wantTypes) {
		t.Fatalf("results %+v", mr.Results)
	}
	for i, res := range mr.Results {
		if res.Type != wantTypes[i] || res.Err != jute.OK {
			t.Errorf("result %d: %+v", i, res)
		}
	}
	if p := mr.Results[0].Resp.(*jute.PathRequest).Path; p != "/m/s0000000001" {
		t.Errorf("first seq %s", p)
	}
	if p := mr.Results[1].Resp.(*jute.Create2Response).Path; p != "/m/s0000000002" {
		t.Errorf("second seq %s", p)
	}
	if st := mr.Results[4].Resp.(*jute.StatResponse).Stat; st.Version != 1 || st.Mzxid != r.Zxid {
		t.Errorf("setData stat %+v", st)
	}
	if mr.Results[5].Resp != nil || mr.Results[6].Resp != nil {
		t.Error("check/delete with body")
	}
	// 4 creates x 2 events, setData 1, delete 2.
	if len(r.Events) != 11 {
		t.Errorf("%d events: %+v", len(r.Events), r.Events)
	}
	// The encoded response decodes back.
	var back jute.MultiResponse
	if err := jute.Unmarshal(jute.Marshal(mr), &back); err != nil || len(back.Results) != 7 {
		t.Fatalf("roundtrip %v", err)
	}
	st := h.stat("/m")
	if st.Pzxid != r.Zxid || st.NumChildren != 4 || st.Cversion != 6 {
		t.Errorf("/m stat %+v", st)
	}
}

func TestMultiFailureRollsBack(t *testing.T) {
	cases := []struct {
		name   string
		ops    []jute.MultiOp
		failAt int
		code   jute.ErrCode
	}{
		{"dup create", []jute.MultiOp{
			{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: "/m/a", ACL: openACL}},
			{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: "/m/a", ACL: openACL}},
			{Type: jute.OpDelete, Req: &jute.PathVersionRequest{Path: "/m/x", Version: -1}},
		}, 1, jute.ErrNodeExists},
		{"check", []jute.MultiOp{
			{Type: jute.OpDelete, Req: &jute.PathVersionRequest{Path: "/m/x", Version: -1}},
			{Type: jute.OpSetData, Req: &jute.SetDataRequest{Path: "/m", Data: []byte("long data"), Version: -1}},
			{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: "/m/s", ACL: openACL, Flags: 3}},
			{Type: jute.OpCheck, Req: &jute.PathVersionRequest{Path: "/m", Version: 0}},
		}, 3, jute.ErrBadVersion},
		{"delete then recreate then fail", []jute.MultiOp{
			{Type: jute.OpDelete, Req: &jute.PathVersionRequest{Path: "/m/x", Version: -1}},
			{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: "/m/x", ACL: openACL, Flags: 1}},
			{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: "/m/x/y", ACL: openACL}},
		}, 2, jute.ErrNoChildrenForEphem},
		{"ttl disabled", []jute.MultiOp{
			{Type: jute.OpCreateTTL, Req: &jute.CreateRequest{Path: "/m/t", ACL: openACL, Flags: 5, TTL: 9, HasTTL: true}},
		}, 0, jute.ErrUnimplemented},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, Options{})
			h.mustCreate("/m", []byte("d"), 0)
			h.mustCreate("/m/x", []byte("xx"), 0)
			var before bytes.Buffer
			if err := h.tree.WriteSnapshot(&before); err != nil {
				t.Fatal(err)
			}
			statsBefore := h.tree.Stats()
			r := h.write(jute.OpMulti, &jute.MultiRequest{Ops: c.ops})
			if r.Err != jute.OK || r.Events != nil {
				t.Fatalf("header err %v events %+v", r.Err, r.Events)
			}
			mr := r.Resp.(*jute.MultiResponse)
			for i, res := range mr.Results {
				want := jute.OK
				switch {
				case i == c.failAt:
					want = c.code
				case i > c.failAt:
					want = jute.ErrRuntimeInconsistency
				}
				if res.Type != jute.OpError || res.Err != want {
					t.Errorf("result %d: %+v want err %v", i, res, want)
				}
			}
			// Identical state apart from lastZxid.
			h.tree.lastZxid = h.zxid - 1
			var after bytes.Buffer
			if err := h.tree.WriteSnapshot(&after); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before.Bytes(), after.Bytes()) {
				t.Fatal("multi failure left changes behind")
			}
			if s := h.tree.Stats(); s != statsBefore {
				t.Fatalf("stats %+v want %+v", s, statsBefore)
			}
			if len(h.tree.GetEphemerals(testSession, "")) != 0 {
				t.Fatal("ephemeral left registered")
			}
		})
	}
}

func TestEmptyMulti(t *testing.T) {
	h := newHarness(t, Options{})
	r := h.write(jute.OpMulti, &jute.MultiRequest{})
	if r.Err != jute.OK || len(r.Resp.(*jute.MultiResponse).Results) != 0 {
		t.Fatalf("%+v", r)
	}
	h.sess = 5
	if r := h.write(jute.OpMulti, &jute.MultiRequest{}); r.Err != jute.ErrSessionExpired {
		t.Fatalf("expired multi: %v", r.Err)
	}
}

// TestMultiCreateOpcodeFromFlags: inside a multi, ZooKeeper 3.9 lets a
// create's flags override its opcode (multiCreateOp), which decides the
// node's kind and the result's shape; read ops, and flags a create,
// create2 or createContainer cannot carry (unknown, or TTL), fail the
// whole request with MarshallingError and change nothing.
func TestMultiCreateOpcodeFromFlags(t *testing.T) {
	cr := func(op jute.Op, path string, flags int32, ttl int64) jute.MultiOp {
		return jute.MultiOp{Type: op, Req: &jute.CreateRequest{Path: path, ACL: openACL, Flags: flags, TTL: ttl, HasTTL: op == jute.OpCreateTTL}}
	}
	for _, tc := range []struct {
		name    string
		op      jute.MultiOp
		whole   jute.ErrCode // the reply header's code
		result  jute.Op      // the single result's type
		opErr   jute.ErrCode // its error, when result is OpError
		kind    nodeKind
		hasStat bool
	}{
		{"create, container flags", cr(jute.OpCreate, "/m/a", 4, 0), jute.OK, jute.OpCreate2, 0, kindContainer, true},
		{"create, plain", cr(jute.OpCreate, "/m/a", 0, 0), jute.OK, jute.OpCreate, 0, kindPersistent, false},
		{"create2, plain", cr(jute.OpCreate2, "/m/a", 0, 0), jute.OK, jute.OpCreate2, 0, kindPersistent, true},
		{"createContainer, plain flags", cr(jute.OpCreateContainer, "/m/a", 0, 0), jute.OK, jute.OpCreate2, 0, kindContainer, true},
		{"createContainer, ephemeral flags", cr(jute.OpCreateContainer, "/m/a", 1, 0), jute.OK, jute.OpCreate2, 0, kindContainer, true},
		{"createTTL, plain flags", cr(jute.OpCreateTTL, "/m/a", 0, 100), jute.OK, jute.OpCreate, 0, kindPersistent, false},
		{"createTTL, ephemeral flags", cr(jute.OpCreateTTL, "/m/a", 1, 100), jute.OK, jute.OpCreate, 0, kindEphemeral, false},
		{"createTTL, container flags", cr(jute.OpCreateTTL, "/m/a", 4, 100), jute.OK, jute.OpCreate2, 0, kindContainer, true},
		{"createTTL, TTL flags", cr(jute.OpCreateTTL, "/m/a", 5, 100), jute.OK, jute.OpCreate2, 0, kindTTL, true},
		{"createTTL, bad TTL", cr(jute.OpCreateTTL, "/m/a", 5, 0), jute.OK, jute.OpError, jute.ErrBadArguments, 0, false},
		{"createTTL, unknown flags", cr(jute.OpCreateTTL, "/m/a", 7, 100), jute.OK, jute.OpError, jute.ErrBadArguments, 0, false},
		{"create, TTL flags", cr(jute.OpCreate, "/m/a", 5, 0), jute.ErrMarshallingError, 0, 0, 0, false},
		{"create2, TTL flags", cr(jute.OpCreate2, "/m/a", 6, 0), jute.ErrMarshallingError, 0, 0, 0, false},
		{"create, unknown flags", cr(jute.OpCreate, "/m/a", 7, 0), jute.ErrMarshallingError, 0, 0, 0, false},
		{"getData", jute.MultiOp{Type: jute.OpGetData, Req: &jute.PathWatchRequest{Path: "/m"}}, jute.ErrMarshallingError, 0, 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{ExtendedTypes: true})
			h.mustCreate("/m", nil, 0)
			r := h.write(jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{tc.op}})
			if r.Err != tc.whole {
				t.Fatalf("reply code %d, want %d", r.Err, tc.whole)
			}
			if tc.whole != jute.OK {
				if st := h.stat("/m"); st.NumChildren != 0 || st.Cversion != 0 {
					t.Errorf("the failed multi changed /m: %+v", st)
				}
				return
			}
			res := r.Resp.(*jute.MultiResponse).Results[0]
			if res.Type != tc.result || res.Err != tc.opErr {
				t.Fatalf("result %+v, want type %d err %d", res, tc.result, tc.opErr)
			}
			if tc.result == jute.OpError {
				return
			}
			if _, ok := res.Resp.(*jute.Create2Response); ok != tc.hasStat {
				t.Errorf("result body %T, stat wanted: %v", res.Resp, tc.hasStat)
			}
			if n := h.tree.lookup("/m/a"); n == nil || n.kind() != tc.kind {
				t.Errorf("node /m/a: %+v, want kind %d", n, tc.kind)
			}
		})
	}
	// Undecodable ops fail the multi even after an op that fails.
	h := newHarness(t, Options{ExtendedTypes: true})
	h.mustCreate("/m", nil, 0)
	r := h.write(jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{
		{Type: jute.OpCheck, Req: &jute.PathVersionRequest{Path: "/nope", Version: -1}},
		cr(jute.OpCreate, "/m/a", 5, 0),
	}})
	if r.Err != jute.ErrMarshallingError {
		t.Errorf("check failing before a TTL-flagged create: %d %+v", r.Err, r.Resp)
	}
}
