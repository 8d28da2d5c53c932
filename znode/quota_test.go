package znode

import (
	"bytes"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

func (h *harness) data(path string) string {
	h.t.Helper()
	d, _, err := h.tree.GetData(path, nil)
	if err != nil {
		h.t.Fatalf("get %s: %v", path, err)
	}
	return string(d)
}

func (h *harness) setData(path, data string) *Result {
	return h.write(jute.OpSetData, &jute.SetDataRequest{Path: path, Data: []byte(data), Version: -1})
}

// setupQuota replays what zkCli's "setquota -n 5 /q" does, as observed on
// ZooKeeper 3.8.0.
func setupQuota(h *harness, limits string) {
	h.mustCreate("/q", []byte("d1"), 0)
	h.mustCreate("/q/a", []byte("xyz"), 0)
	h.mustCreate("/zookeeper/quota/q", nil, 0)
	h.mustCreate("/zookeeper/quota/q/"+QuotaLimitNode, []byte(limits), 0)
	r := h.write(jute.OpCreate2, &jute.CreateRequest{Path: "/zookeeper/quota/q/" + QuotaStatNode, Data: []byte("count=0,bytes=0"), ACL: openACL})
	if r.Err != jute.OK || r.Resp.(*jute.Create2Response).Stat.DataLength != 15 {
		h.t.Fatalf("create stats: %+v", r)
	}
}

func TestQuotaStats(t *testing.T) {
	h := newHarness(t, Options{})
	setupQuota(h, "count=5,bytes=-1=;byteHardLimit=-1;countHardLimit=-1")
	stats := "/zookeeper/quota/q/" + QuotaStatNode
	steps := []struct {
		do   func() *Result
		want string
	}{
		{func() *Result { return nil }, "count=2,bytes=5"},
		{func() *Result { return h.create("/q/b", []byte("12"), 0) }, "count=3,bytes=7"},
		{func() *Result { return h.setData("/q/a", "x") }, "count=3,bytes=5"},
		{func() *Result { return h.create("/q/b/c", nil, 0) }, "count=4,bytes=5"},
		{func() *Result { return h.create("/qq", []byte("zz"), 0) }, "count=4,bytes=5"},
		{func() *Result {
			return h.write(jute.OpDelete, &jute.PathVersionRequest{Path: "/q/b/c", Version: -1})
		}, "count=3,bytes=5"},
		{func() *Result {
			return h.write(jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{
				{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: "/q/m", Data: []byte("1234"), ACL: openACL}},
				{Type: jute.OpCheck, Req: &jute.PathVersionRequest{Path: "/q", Version: 9}},
			}})
		}, "count=3,bytes=5"},
		{func() *Result { return h.create("/q/m", []byte("1234"), 0) }, "count=4,bytes=9"},
	}
	for i, s := range steps {
		if r := s.do(); r != nil && r.Err != jute.OK {
			t.Fatalf("step %d: %v", i, r.Err)
		}
		if got := h.data(stats); got != s.want {
			t.Fatalf("step %d: stats %q want %q", i, got, s.want)
		}
	}
	st := h.stat(stats)
	if st.Version != 0 || st.Mzxid != st.Czxid {
		t.Fatalf("stats node metadata changed: %+v", st)
	}
	// The stats survive a snapshot, and so does the quota itself.
	var buf bytes.Buffer
	if err := h.tree.WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	tr, err := ReadSnapshot(&buf, Options{})
	if err != nil {
		t.Fatal(err)
	}
	h.tree = tr
	h.create("/q/n", nil, 0)
	if got := h.data(stats); got != "count=5,bytes=9" {
		t.Fatalf("after restore %q", got)
	}
	// Deleting the limits node ends the accounting.
	h.write(jute.OpDelete, &jute.PathVersionRequest{Path: "/zookeeper/quota/q/" + QuotaLimitNode, Version: -1})
	h.create("/q/o", nil, 0)
	if got := h.data(stats); got != "count=5,bytes=9" {
		t.Fatalf("after removing the quota %q", got)
	}
}

func TestQuotaEnforcement(t *testing.T) {
	cases := []struct {
		name    string
		limits  string
		enforce bool
		op      func(h *harness) *Result
		want    jute.ErrCode
	}{
		{"soft count", "count=2,bytes=-1", true, func(h *harness) *Result { return h.create("/q/x", nil, 0) }, jute.OK},
		{"hard count", "count=-1,bytes=-1=;byteHardLimit=-1;countHardLimit=2", true,
			func(h *harness) *Result { return h.create("/q/x", nil, 0) }, jute.ErrQuotaExceeded},
		{"hard count not enforced", "count=-1,bytes=-1=;byteHardLimit=-1;countHardLimit=2", false,
			func(h *harness) *Result { return h.create("/q/x", nil, 0) }, jute.OK},
		{"hard count room", "count=-1,bytes=-1=;byteHardLimit=-1;countHardLimit=3", true,
			func(h *harness) *Result { return h.create("/q/x", nil, 0) }, jute.OK},
		{"hard bytes create", "count=-1,bytes=-1=;byteHardLimit=6;countHardLimit=-1", true,
			func(h *harness) *Result { return h.create("/q/x", []byte("ab"), 0) }, jute.ErrQuotaExceeded},
		{"hard bytes setData", "count=-1,bytes=-1=;byteHardLimit=6;countHardLimit=-1", true,
			func(h *harness) *Result { return h.setData("/q/a", "wxyz") }, jute.OK},
		{"hard bytes setData over", "count=-1,bytes=-1=;byteHardLimit=6;countHardLimit=-1", true,
			func(h *harness) *Result { return h.setData("/q/a", "vwxyz") }, jute.ErrQuotaExceeded},
		// ZooKeeper compares the new total, so shrinking while still over fails.
		{"shrinking still over", "count=-1,bytes=-1=;byteHardLimit=1;countHardLimit=-1", true,
			func(h *harness) *Result { return h.setData("/q/a", "") }, jute.ErrQuotaExceeded},
		{"shrinking under", "count=-1,bytes=-1=;byteHardLimit=3;countHardLimit=-1", true,
			func(h *harness) *Result { return h.setData("/q/a", "") }, jute.OK},
		{"quota beats bad version", "count=-1,bytes=-1=;byteHardLimit=1;countHardLimit=-1", true,
			func(h *harness) *Result {
				return h.write(jute.OpSetData, &jute.SetDataRequest{Path: "/q/a", Data: []byte("long"), Version: 7})
			}, jute.ErrQuotaExceeded},
		{"outside the quota", "count=-1,bytes=-1=;byteHardLimit=1;countHardLimit=1", true,
			func(h *harness) *Result { return h.create("/qq", []byte("abc"), 0) }, jute.OK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, Options{EnforceQuota: c.enforce})
			setupQuota(h, c.limits)
			if r := c.op(h); r.Err != c.want {
				t.Fatalf("got %v want %v", r.Err, c.want)
			}
		})
	}
}

func TestStatsTrack(t *testing.T) {
	cases := []struct{ in, out string }{
		{"count=2,bytes=5", "count=2,bytes=5"},
		{"", "count=-1,bytes=-1"},
		{"count=5,bytes=-1=;byteHardLimit=-1;countHardLimit=-1", "count=5,bytes=-1=;byteHardLimit=-1;countHardLimit=-1"},
		{"bytes=3;count=1", "count=1,bytes=3"},
		{"junk,count=x,count=4", "count=4,bytes=-1"},
	}
	for _, c := range cases {
		if got := parseStatsTrack([]byte(c.in)).String(); got != c.out {
			t.Errorf("%q: %q want %q", c.in, got, c.out)
		}
	}
}
