package znode

import (
	"fmt"
	"syscall"
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
//
// Linear is checked as growth, not as a time: the same six writes with 20
// times the entries may cost at most 60 times the CPU (linear work costs
// ~20 times, the quadratic check took ~450 times), the least of a few
// runs each. CPU time, not wall time: on a machine running a second make
// test, a run of seconds is preempted far more than one of milliseconds
// (wall-clock ratios of 118x were seen); the race detector slows both
// sizes alike.
func TestAuditHugeACLLinear(t *testing.T) {
	const small, large = 2_000, 40_000
	fastest := func(n, runs int) time.Duration {
		best := time.Duration(1<<63 - 1)
		for range runs {
			h := newHarness(t, Options{})
			list := hugeACL(n)
			start := cpuTime(t)
			sixHugeACLWrites(t, h, list)
			if d := cpuTime(t) - start; d < best {
				best = d
			}
		}
		return best
	}
	s, l := fastest(small, 5), fastest(large, 2)
	t.Logf("six writes' CPU: %v with %d entries, %v with %d (%.0fx)", s, small, l, large, float64(l)/float64(s))
	if s < time.Millisecond {
		s = time.Millisecond // a clock's coarseness is not linearity
	}
	if l > 60*s {
		t.Fatalf("six writes with %d entries took %v of CPU, %.0f times %v with %d: not linear",
			large, l, float64(l)/float64(s), s, small)
	}

	h := newHarness(t, Options{})
	list := hugeACL(large)
	sixHugeACLWrites(t, h, list)
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

// sixHugeACLWrites makes the six writes of TestAuditHugeACLLinear with
// list as their ACL, checks their answers and returns their total time.
func sixHugeACLWrites(t *testing.T, h *harness, list []jute.ACL) time.Duration {
	t.Helper()
	h.ids = []jute.Id{{Scheme: "digest", ID: "user0:hash"}}
	steps := []struct {
		name string
		op   jute.Op
		req  jute.Record
		want jute.ErrCode
	}{
		{"create", jute.OpCreate, &jute.CreateRequest{Path: "/big", ACL: list}, jute.OK},
		{"create under a missing parent", jute.OpCreate, &jute.CreateRequest{Path: "/none/big", ACL: list}, jute.ErrNoNode},
		{"create that exists", jute.OpCreate, &jute.CreateRequest{Path: "/big", ACL: list}, jute.ErrNodeExists},
		{"setACL", jute.OpSetACL, &jute.SetACLRequest{Path: "/big", ACL: append(list[1:len(list):len(list)], list[0]), Version: -1}, jute.OK},
		{"setACL of a missing node", jute.OpSetACL, &jute.SetACLRequest{Path: "/none", ACL: list, Version: -1}, jute.ErrNoNode},
		{"setACL with a duplicate", jute.OpSetACL, &jute.SetACLRequest{Path: "/big", ACL: append(list[:len(list):len(list)], list[7]), Version: -1}, jute.OK},
	}
	var total time.Duration
	for _, s := range steps {
		start := time.Now()
		r := h.write(s.op, s.req)
		total += time.Since(start)
		if r.Err != s.want {
			t.Fatalf("%s with %d entries: %v, want %v", s.name, len(list), r.Err, s.want)
		}
	}
	return total
}

// cpuTime returns the CPU time this process has used, user and system.
func cpuTime(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
