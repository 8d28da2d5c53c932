package znode

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

// dirModel is the expected tree of TestRandomDirectories: path -> data.
type dirModel map[string]string

// children returns the sorted child names of p in the model.
func (m dirModel) children(p string) []string {
	out := []string{}
	for q := range m {
		if parent, name, _ := splitPath(q); parent == p {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// TestRandomDirectories creates and deletes children of a few directories,
// singly and in multis that sometimes fail, so child sets keep crossing the
// slice/table thresholds and the parents index keeps changing, and checks
// the tree against a model, after snapshot round trips and clones too.
func TestRandomDirectories(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		rng := rand.New(rand.NewPCG(seed, 99))
		h := newHarness(t, Options{})
		model := dirModel{}
		dirs := []string{"/d", "/d/e", "/f"}
		for _, d := range dirs {
			h.mustCreate(d, nil, 0)
			model[d] = ""
		}
		names := 0 // the name space drifts between 4 and 28 names a directory
		pick := func() (string, string) {
			d := dirs[rng.IntN(len(dirs))]
			return d, fmt.Sprintf("%s/c%02d", d, rng.IntN(names))
		}
		for step := 0; step < 3000; step++ {
			names = 4 + (step/150)%7*4
			if rng.IntN(3) > 0 {
				_, p := pick()
				if _, ok := model[p]; ok {
					if r := h.write(jute.OpDelete, &jute.PathVersionRequest{Path: p, Version: -1}); r.Err != jute.OK {
						t.Fatalf("delete %s: %v", p, r.Err)
					}
					delete(model, p)
				} else {
					data := fmt.Sprint(step)
					h.mustCreate(p, []byte(data), 0)
					model[p] = data
				}
			} else {
				// A multi of creates and deletes; with probability 1/2 a
				// final check fails and everything is rolled back.
				var ops []jute.MultiOp
				next := map[string]*string{}
				for i := rng.IntN(6); i >= 0; i-- {
					_, p := pick()
					_, exists := model[p]
					if v, ok := next[p]; ok {
						exists = v != nil
					}
					if exists {
						ops = append(ops, jute.MultiOp{Type: jute.OpDelete, Req: &jute.PathVersionRequest{Path: p, Version: -1}})
						next[p] = nil
					} else {
						data := fmt.Sprint(step)
						ops = append(ops, jute.MultiOp{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: p, Data: []byte(data), ACL: openACL}})
						next[p] = &data
					}
				}
				fail := rng.IntN(2) == 0
				if fail {
					ops = append(ops, jute.MultiOp{Type: jute.OpCheck, Req: &jute.PathVersionRequest{Path: "/d", Version: 12345}})
				}
				r := h.write(jute.OpMulti, &jute.MultiRequest{Ops: ops})
				failed := false
				for _, res := range r.Resp.(*jute.MultiResponse).Results {
					failed = failed || res.Type == jute.OpError
				}
				if failed != fail {
					t.Fatalf("step %d: multi failed %v, want %v: %+v", step, failed, fail, r.Resp)
				}
				if !failed {
					for p, v := range next {
						if v == nil {
							delete(model, p)
						} else {
							model[p] = *v
						}
					}
				}
			}
			if step%100 == 99 {
				compareDirs(t, h.tree, model)
				var buf bytes.Buffer
				if err := h.tree.WriteSnapshot(&buf); err != nil {
					t.Fatal(err)
				}
				restored, err := ReadSnapshot(&buf, Options{})
				if err != nil {
					t.Fatal(err)
				}
				compareDirs(t, restored, model)
				compareDirs(t, h.tree.Clone(), model)
				if step%200 == 199 {
					h.tree = restored // keep going on the restored tree
				}
			}
		}
	}
}

// compareDirs checks tr against the model: every node's data, child list
// and child count, absent paths, and the tree's invariants.
func compareDirs(t *testing.T, tr *Tree, model dirModel) {
	t.Helper()
	checkInvariants(t, tr)
	for p, data := range model {
		got, st, err := tr.GetData(p, nil)
		if err != nil || string(got) != data {
			t.Fatalf("%s: %q %v, want %q", p, got, err, data)
		}
		kids, _, err := tr.GetChildren(p, nil)
		if want := model.children(p); err != nil || !reflect.DeepEqual(kids, want) {
			t.Fatalf("%s: children %v %v, want %v", p, kids, err, want)
		}
		if int(st.NumChildren) != len(kids) {
			t.Fatalf("%s: %d children, stat says %d", p, len(kids), st.NumChildren)
		}
		if _, err := tr.Exists(p+"/missing", nil); err != jute.ErrNoNode {
			t.Fatalf("%s/missing: %v", p, err)
		}
	}
}

// TestShardedDirectory grows one directory past a single child table and
// back, through Apply, checking listings, snapshots and clones on the way.
func TestShardedDirectory(t *testing.T) {
	h := newHarness(t, Options{})
	h.mustCreate("/big", nil, 0)
	model := dirModel{"/big": ""}
	n := maxTableEntries + 500
	for i := 0; i < n; i++ {
		p := fmt.Sprintf("/big/k%05d", i)
		h.mustCreate(p, nil, 0)
		model[p] = ""
	}
	if h.tree.lookup("/big").children().shards() == nil {
		t.Fatal("no shards")
	}
	check := func() {
		t.Helper()
		kids, st, err := h.tree.GetChildren("/big", nil)
		if err != nil || len(kids) != len(model)-1 || int(st.NumChildren) != len(kids) || !slices.IsSorted(kids) {
			t.Fatalf("%d children, stat %d, %v", len(kids), st.NumChildren, err)
		}
		for _, k := range kids {
			if _, ok := model["/big/"+k]; !ok {
				t.Fatalf("unexpected child %s", k)
			}
		}
		var a, b bytes.Buffer
		if err := h.tree.WriteSnapshot(&a); err != nil {
			t.Fatal(err)
		}
		restored, err := ReadSnapshot(bytes.NewReader(a.Bytes()), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := restored.Clone().WriteSnapshot(&b); err != nil || !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Fatalf("snapshot of a restored clone differs: %v", err)
		}
		checkInvariants(t, h.tree)
	}
	check()
	for i := 0; i < n-3; i++ {
		p := fmt.Sprintf("/big/k%05d", i)
		if r := h.write(jute.OpDelete, &jute.PathVersionRequest{Path: p, Version: -1}); r.Err != jute.OK {
			t.Fatalf("delete %s: %v", p, r.Err)
		}
		delete(model, p)
		if i == n-maxTableEntries/8 {
			check()
		}
	}
	if kids := h.tree.lookup("/big").children(); kids.big() {
		t.Fatal("three children still in a table")
	}
	check()
}
