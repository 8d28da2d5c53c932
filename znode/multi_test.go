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
		{"read op", []jute.MultiOp{
			{Type: jute.OpGetData, Req: &jute.PathWatchRequest{Path: "/m"}},
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
