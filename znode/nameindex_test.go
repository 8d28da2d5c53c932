package znode

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

// TestNameIndexViewsStayPut grows one directory past the name index's
// threshold and churns it around the threshold and far above it, taking
// ChildNames views between changes (as readers do under the read lock) and
// checking, after every change, that each view taken still lists exactly
// the names of its moment: a change never alters what a reader holds. The
// tree's invariants (Verify checks the index against the set) hold at
// every step, through snapshot round trips and clones.
func TestNameIndexViewsStayPut(t *testing.T) {
	h := newHarness(t, Options{})
	h.mustCreate("/d", nil, 0)
	rng := rand.New(rand.NewPCG(7, 11))
	live := map[string]bool{}
	type taken struct {
		v    ChildNames
		want []string
	}
	var views []taken
	sortedLive := func() []string {
		out := make([]string, 0, len(live))
		for k := range live {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	// Phases: grow to 3000, churn, shrink below nameIndexMin/2, grow again.
	targets := []int{3000, 3000, 400, 1500, 10}
	for phase, target := range targets {
		for step := 0; step < 4000; step++ {
			name := fmt.Sprintf("n%05d", rng.IntN(6000))
			grow := len(live) < target || (len(live) == target && rng.IntN(2) == 0)
			if live[name] == grow {
				continue
			}
			if grow {
				h.mustCreate("/d/"+name, nil, 0)
				live[name] = true
			} else {
				if r := h.write(jute.OpDelete, &jute.PathVersionRequest{Path: "/d/" + name, Version: -1}); r.Err != jute.OK {
					t.Fatalf("delete %s: %v", name, r.Err)
				}
				delete(live, name)
			}
			if rng.IntN(40) == 0 {
				v, _, err := h.tree.ChildNames("/d", nil)
				if err != nil {
					t.Fatal(err)
				}
				views = append(views, taken{v, sortedLive()})
				if len(views) > 30 {
					views = views[1:]
				}
			}
			if step%64 != 0 {
				continue
			}
			for i, tk := range views {
				if got := tk.v.AppendTo(nil); !slices.Equal(got, tk.want) || tk.v.Len() != len(tk.want) {
					t.Fatalf("phase %d step %d: view %d changed: %d names, want %d", phase, step, i, len(got), len(tk.want))
				}
			}
		}
		if err := h.tree.Verify(); err != nil {
			t.Fatalf("phase %d: %v", phase, err)
		}
		kids, _, err := h.tree.GetChildren("/d", nil)
		if err != nil || !slices.Equal(kids, sortedLive()) {
			t.Fatalf("phase %d: children differ (%d, want %d)", phase, len(kids), len(live))
		}
		if c := h.tree.Clone(); c.Verify() != nil {
			t.Fatalf("phase %d: clone: %v", phase, c.Verify())
		}
	}
}

// TestNameIndexChunks checks the chunk discipline directly: splits at
// nameChunkMax, merges of small neighbours, removal of empty chunks, and
// copy-on-write after a view.
func TestNameIndexChunks(t *testing.T) {
	var names []string
	for i := 0; i < 2000; i += 2 {
		names = append(names, fmt.Sprintf("k%05d", i))
	}
	x := newNameIndex(slices.Clone(names))
	check := func() {
		t.Helper()
		sorted := slices.Clone(names)
		slices.Sort(sorted)
		if err := x.check(sorted); err != nil {
			t.Fatal(err)
		}
	}
	check()
	v := x.view()
	before := v.AppendTo(nil)
	for i := 1; i < 2000; i += 2 { // fill every gap: chunks split
		n := fmt.Sprintf("k%05d", i)
		x.insert(n)
		names = append(names, n)
	}
	check()
	if !slices.Equal(v.AppendTo(nil), before) {
		t.Fatal("a view changed under inserts")
	}
	for _, c := range x.chunks {
		if len(c.names) > nameChunkMax {
			t.Fatalf("chunk of %d", len(c.names))
		}
	}
	chunks := len(x.chunks)
	v = x.view()
	before = v.AppendTo(nil)
	for i := 0; i < 1900; i++ { // remove most: chunks empty and merge
		n := fmt.Sprintf("k%05d", i)
		x.remove(n)
		names = slices.DeleteFunc(names, func(s string) bool { return s == n })
	}
	x.remove("absent")
	check()
	if !slices.Equal(v.AppendTo(nil), before) {
		t.Fatal("a view changed under removals")
	}
	if len(x.chunks) >= chunks || len(x.chunks) > 2 {
		t.Fatalf("%d chunks left of %d for %d names", len(x.chunks), chunks, x.n)
	}
}

// TestChildNamesLockWorkIsConstant checks that listing a large directory
// does no work proportional to its size while the tree's lock is held:
// ChildNames allocates nothing for a directory of 200,000 children (it
// hands out the index's current version), where GetChildren copies.
func TestChildNamesLockWorkIsConstant(t *testing.T) {
	h := newHarness(t, Options{})
	h.mustCreate("/big", nil, 0)
	for i := 0; i < 200_000; i++ {
		h.mustCreate(fmt.Sprintf("/big/c%07d", i), nil, 0)
	}
	allocs := testing.AllocsPerRun(20, func() {
		if v, _, err := h.tree.ChildNames("/big", nil); err != nil || v.Len() != 200_000 {
			t.Fatalf("%d names, %v", v.Len(), err)
		}
	})
	if allocs != 0 {
		t.Fatalf("ChildNames of 200,000 children allocates %v times under the lock", allocs)
	}
}

// TestDescendantCounts checks getAllChildrenNumber against a walk of the
// subtree after creates, deletes and a failed multi (rolled back).
func TestDescendantCounts(t *testing.T) {
	h := newHarness(t, Options{})
	for _, p := range []string{"/a", "/a/b", "/a/b/c", "/a/b/d", "/a/e", "/f"} {
		h.mustCreate(p, nil, 0)
	}
	count := func(p string) int32 {
		t.Helper()
		n, err := h.tree.GetAllChildrenNumber(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	want := map[string]int32{"/a": 4, "/a/b": 2, "/a/b/c": 0, "/f": 0}
	for p, w := range want {
		if got := count(p); got != w {
			t.Errorf("%s: %d descendants, want %d", p, got, w)
		}
	}
	// A multi that creates two and deletes one, then fails: nothing changes.
	r := h.write(jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{
		{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: "/a/b/x", ACL: openACL}},
		{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: "/a/b/x/y", ACL: openACL}},
		{Type: jute.OpDelete, Req: &jute.PathVersionRequest{Path: "/a/e", Version: -1}},
		{Type: jute.OpCheck, Req: &jute.PathVersionRequest{Path: "/f", Version: 9}},
	}})
	if r.Err != jute.OK {
		t.Fatal(r.Err)
	}
	if got := count("/a"); got != 4 {
		t.Fatalf("/a after a failed multi: %d, want 4", got)
	}
	if r := h.write(jute.OpDelete, &jute.PathVersionRequest{Path: "/a/b/c", Version: -1}); r.Err != jute.OK {
		t.Fatal(r.Err)
	}
	if got, root := count("/a"), count("/"); got != 3 || root != int32(h.tree.count-1) {
		t.Fatalf("/a %d (want 3), / %d (want %d)", got, root, h.tree.count-1)
	}
	if err := h.tree.Verify(); err != nil {
		t.Fatal(err)
	}
}
