package soak

import (
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// The checkers are tested on made-up histories: a checker that passes
// everything would make the soak prove nothing.

// h builds operations with times in ms.
type h struct{ ops []*op }

func (b *h) add(client int, kind opKind, key, value string, call, ret int64, out outcome, err error) *op {
	o := &op{client: client, session: int64(client + 1), kind: kind, key: key, value: value, version: -1,
		call: call * 1e6, ret: ret * 1e6, out: out, err: err}
	b.ops = append(b.ops, o)
	return o
}

func (b *h) set(client int, key, value string, call, ret int64, version int32, zxid int64) *op {
	o := b.add(client, opSet, key, value, call, ret, outOK, nil)
	o.stat = zk.Stat{Version: version, Mzxid: zxid}
	return o
}

func (b *h) read(client int, kind opKind, key, data string, call, ret int64, version int32, zxid int64) *op {
	o := b.add(client, kind, key, "", call, ret, outOK, nil)
	o.exists, o.data, o.stat = true, data, zk.Stat{Version: version, Mzxid: zxid, Czxid: zxid - int64(version)}
	return o
}

func TestRegisterCheckFindsViolations(t *testing.T) {
	const k = "/soak/r/g00000-k0"
	base := func() *h {
		var b h
		b.add(0, opCreate, k, "a", 0, 10, outOK, nil)
		b.set(1, k, "b", 20, 30, 1, 5)
		return &b
	}
	dir := t.TempDir()
	check := func(b *h, finals ...*op) registerReport { return checkRegisters(b.ops, finals, dir, 10*time.Second) }

	b := base()
	b.read(2, opSyncRead, k, "b", 40, 50, 1, 5)
	b.add(0, opSet, k, "c", 60, 70, outUnknown, zk.ErrConnectionClosed)
	b.read(2, opSyncRead, k, "c", 80, 90, 2, 7) // the unknown write took effect
	b.add(1, opCAS, k, "d", 100, 110, outFail, zk.ErrBadVersion).version = 0
	if rep := check(b); len(rep.violations)+len(rep.lost)+len(rep.inconclusive) > 0 || rep.keys != 1 {
		t.Fatalf("a linearizable history: %+v", rep)
	}

	b = base()
	b.read(2, opSyncRead, k, "a", 40, 50, 0, 3) // older than a write acknowledged before it began
	if rep := check(b); len(rep.violations) != 1 {
		t.Fatalf("a stale sync-read: %+v", rep)
	}

	b = base()
	b.read(2, opRead, k, "a", 40, 50, 0, 3) // plain reads may be stale: not in this check
	if rep := check(b); len(rep.violations) != 0 {
		t.Fatalf("a stale plain read: %+v", rep)
	}

	b = base()
	final := &op{client: -1, kind: opSyncRead, key: k, version: -1, call: 1000e6, ret: 1001e6, out: outOK,
		exists: true, data: "a", stat: zk.Stat{Version: 0}}
	if rep := check(b, final); len(rep.lost) != 1 || len(rep.violations) != 0 {
		t.Fatalf("a final state without an acknowledged write: %+v", rep)
	}

	b = base()
	b.add(2, opDelete, k, "", 40, 50, outOK, nil)
	b.add(0, opCreate, k, "e", 60, 70, outOK, nil)
	b.add(1, opCAS, k, "f", 80, 90, outOK, nil).stat.Version = 2 // a new node's first write gives version 1
	b.ops[len(b.ops)-1].version = 1
	if rep := check(b); len(rep.violations) != 1 {
		t.Fatalf("a version that does not restart at a create: %+v", rep)
	}
}

func TestReadCheckFindsViolations(t *testing.T) {
	const k = "/soak/r/g00000-k0"
	var b h
	b.add(0, opCreate, k, "a", 0, 10, outOK, nil)
	b.set(0, k, "b", 20, 30, 1, 5)
	b.read(1, opRead, k, "a", 40, 41, 0, 3) // stale, but this session saw nothing newer: allowed
	b.read(1, opRead, k, "b", 42, 43, 1, 5)
	if rep := checkReads(b.ops); len(rep.violations) != 0 || rep.checked != 2 || rep.stale != 1 {
		t.Fatalf("allowed reads: %+v", rep)
	}

	b.read(1, opRead, k, "a", 44, 45, 0, 3) // back in time after seeing zxid 5
	rep := checkReads(b.ops)
	if len(rep.violations) != 1 || !strings.Contains(rep.violations[0], "had seen zxid") {
		t.Fatalf("a session going back: %+v", rep)
	}

	var c h
	c.add(0, opCreate, k, "a", 0, 10, outOK, nil)
	c.read(1, opRead, k, "zz", 20, 21, 0, 3)                   // never written
	c.read(1, opRead, k, "a", 22, 23, 1, 9)                    // a create's value with version 1
	c.add(2, opSet, k, "x", 30, 40, outFail, zk.ErrBadVersion) // failed ...
	c.read(1, opRead, k, "x", 41, 42, 1, 11)                   // ... yet read
	c.set(2, k, "y", 50, 60, 2, 12)
	c.read(3, opRead, k, "y", 61, 62, 2, 13) // another zxid for the same write (two findings)
	if rep := checkReads(c.ops); len(rep.violations) != 5 {
		t.Fatalf("want 5 violations: %q", rep.violations)
	}
}

func TestSeqCheckFindsViolations(t *testing.T) {
	const parent = "/soak/s/g00000"
	tree := map[string]znodeState{}
	var b h
	seq := func(client int, value string, call, ret int64, out outcome, path string) {
		o := b.add(client, opSeqCreate, parent, value, call, ret, out, nil)
		o.path = path
	}
	seq(0, "c0-00000001", 0, 10, outOK, parent+"/c0-00000001-0000000000")
	seq(1, "c1-00000001", 20, 30, outOK, parent+"/c1-00000001-0000000001")
	seq(2, "c2-00000001", 20, 30, outUnknown, "")
	for _, p := range []string{"/c0-00000001-0000000000", "/c1-00000001-0000000001", "/c2-00000001-0000000002"} {
		tree[parent+p] = znodeState{}
	}
	if rep := checkSeqCreates(b.ops, tree); len(rep.lost)+len(rep.problems) != 0 || rep.acked != 2 || rep.present != 3 {
		t.Fatalf("a good history: %+v", rep)
	}

	seq(3, "c3-00000001", 40, 50, outOK, parent+"/c3-00000001-0000000003") // lost
	seq(4, "c4-00000001", 40, 50, outFail, "")                             // failed, yet there
	tree[parent+"/c4-00000001-0000000004"] = znodeState{}
	tree[parent+"/c2-00000001-0000000005"] = znodeState{} // applied twice
	seq(5, "c5-00000001", 60, 70, outOK, parent+"/c5-00000001-0000000001")
	tree[parent+"/c5-00000001-0000000001"] = znodeState{} // a number below one acknowledged before
	rep := checkSeqCreates(b.ops, tree)
	if len(rep.lost) != 1 || len(rep.problems) != 3 {
		t.Fatalf("want 1 lost and 3 problems: %+v", rep)
	}
}

func TestQuorumAndStalls(t *testing.T) {
	c := &cluster{diskID: 5}
	for i := 1; i <= 5; i++ {
		c.members = append(c.members, &member{id: i})
	}
	n := newNemesis(c, nemesisConfig{}, 1, time.Now(), t.Logf)
	split := &fault{net: partition{}}
	split.net.cut([]int{1, 2}, []int{3, 4, 5})
	bridge := &fault{net: partition{}}
	bridge.net.cut([]int{1, 2}, []int{4, 5})
	oneway := &fault{net: partition{}}
	oneway.net.mute(1, []int{2, 3, 4, 5})
	for _, tc := range []struct {
		name string
		f    *fault
		down []int
		want bool
	}{
		{"nothing", &fault{}, nil, true},
		{"two down", &fault{target: []int{1, 2}}, nil, true},
		{"three down", &fault{target: []int{1, 2, 3}}, nil, false},
		{"split", split, nil, true},
		{"split and one of the three down", split, []int{3}, false},
		{"split and one of the two down", split, []int{1}, true},
		{"bridge", bridge, nil, true},
		{"bridge without the bridge", bridge, []int{3}, false},
		{"one-way and two more down", oneway, []int{2, 3}, false},
	} {
		n.down = map[int]bool{}
		for _, id := range tc.down {
			n.down[id] = true
		}
		if got := n.quorum(tc.f); got != tc.want {
			t.Errorf("%s: quorum %v, want %v", tc.name, got, tc.want)
		}
	}

	s := time.Second
	avail := []availability{{0, true, false}, {10 * s, false, false}, {50 * s, true, false}}
	var ops []*op
	for _, at := range []time.Duration{1 * s, 4 * s, 7 * s, 9 * s, 30 * s, 55 * s, 58 * s} {
		ops = append(ops, &op{kind: opSet, out: outOK, ret: int64(at)})
	}
	if worst, at := longestStall(avail, ops, 60*s); worst != 5*s || at != 50*s {
		t.Fatalf("longest stall %v at %v, want 5s at 50s (the 21s one had no quorum)", worst, at)
	}
}
