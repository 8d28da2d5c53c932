package znode

import (
	"fmt"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// hugeACL returns n distinct valid digest entries.
func hugeACL(n int) []jute.ACL {
	list := make([]jute.ACL, n)
	for i := range list {
		list[i] = jute.ACL{Perms: jute.PermAll, ID: jute.Id{Scheme: "digest", ID: fmt.Sprintf("user%d:hash", i)}}
	}
	return list
}

// TestAuditHugeACLLinear: a write carrying a 40,000-entry ACL, succeeding
// or failing, costs linear work (issue 29, finding 4). Before the fix the
// duplicate check was quadratic and ran before the cheap checks, so every
// such request (failed ones are logged too) cost seconds on every replay.
// ZooKeeper's order of answers is kept: InvalidACL before NoNode.
func TestAuditHugeACLLinear(t *testing.T) {
	h := newHarness(t, Options{})
	h.ids = []jute.Id{{Scheme: "digest", ID: "user0:hash"}}
	list := hugeACL(40_000)
	steps := []struct {
		name string
		op   jute.Op
		req  jute.Record
		want jute.ErrCode
	}{
		{"create", jute.OpCreate, &jute.CreateRequest{Path: "/big", ACL: list}, jute.OK},
		{"create under a missing parent", jute.OpCreate, &jute.CreateRequest{Path: "/none/big", ACL: list}, jute.ErrNoNode},
		{"create that exists", jute.OpCreate, &jute.CreateRequest{Path: "/big", ACL: list}, jute.ErrNodeExists},
		{"setACL", jute.OpSetACL, &jute.SetACLRequest{Path: "/big", ACL: append(list[1:], list[0]), Version: -1}, jute.OK},
		{"setACL of a missing node", jute.OpSetACL, &jute.SetACLRequest{Path: "/none", ACL: list, Version: -1}, jute.ErrNoNode},
		{"setACL with a duplicate", jute.OpSetACL, &jute.SetACLRequest{Path: "/big", ACL: append(list, list[7]), Version: -1}, jute.OK},
	}
	var total time.Duration
	for _, s := range steps {
		start := time.Now()
		r := h.write(s.op, s.req)
		d := time.Since(start)
		total += d
		t.Logf("%s with %d entries: %v", s.name, len(list), d)
		if r.Err != s.want {
			t.Fatalf("%s: %v, want %v", s.name, r.Err, s.want)
		}
		if d > 2*time.Second {
			t.Fatalf("%s took %v", s.name, d)
		}
	}
	if total > 3*time.Second {
		t.Fatalf("six writes took %v", total)
	}
	got, _, _ := h.tree.GetACL("/big", h.ids)
	if len(got) != len(list) {
		t.Fatalf("ACL of /big has %d entries, want %d (duplicate kept?)", len(got), len(list))
	}
	bad := append([]jute.ACL{{Perms: 1, ID: jute.Id{Scheme: "world", ID: "nobody"}}}, list...)
	for _, req := range []struct {
		op  jute.Op
		req jute.Record
	}{
		{jute.OpCreate, &jute.CreateRequest{Path: "/none/x", ACL: bad}},
		{jute.OpSetACL, &jute.SetACLRequest{Path: "/none", ACL: bad, Version: -1}},
	} {
		if r := h.write(req.op, req.req); r.Err != jute.ErrInvalidACL {
			t.Errorf("%v with an invalid entry under a missing path: %v, want InvalidACL", req.op, r.Err)
		}
	}
}
