package znode

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

func TestReaper(t *testing.T) {
	h := newHarness(t, Options{ExtendedTypes: true})
	h.now = 1000
	h.write(jute.OpCreateContainer, &jute.CreateRequest{Path: "/used", ACL: openACL, Flags: 4})
	h.write(jute.OpCreateContainer, &jute.CreateRequest{Path: "/fresh", ACL: openACL, Flags: 4})
	h.write(jute.OpCreateContainer, &jute.CreateRequest{Path: "/busy", ACL: openACL, Flags: 4})
	h.write(jute.OpCreateTTL, &jute.CreateRequest{Path: "/ttl", ACL: openACL, Flags: 5, TTL: 100, HasTTL: true})
	h.write(jute.OpCreateTTL, &jute.CreateRequest{Path: "/ttlkid", ACL: openACL, Flags: 5, TTL: 100, HasTTL: true})
	h.mustCreate("/used/c", nil, 0)
	h.write(jute.OpDelete, &jute.PathVersionRequest{Path: "/used/c", Version: -1})
	h.mustCreate("/busy/c", nil, 0)
	h.mustCreate("/ttlkid/c", nil, 0)
	h.mustCreate("/plain", nil, 0)

	// Containers and TTL nodes report ephemeralOwner 0.
	for _, p := range []string{"/used", "/ttl"} {
		if st := h.stat(p); st.EphemeralOwner != 0 {
			t.Errorf("%s owner %d", p, st.EphemeralOwner)
		}
	}
	if got := h.tree.ReapCandidates(1100); !reflect.DeepEqual(got, []string{"/used"}) {
		t.Fatalf("at 1100: %v", got)
	}
	if got := h.tree.ReapCandidates(1101); !reflect.DeepEqual(got, []string{"/ttl", "/used"}) {
		t.Fatalf("at 1101: %v", got)
	}

	del := func(path string, now int64) *Result {
		h.zxid++
		return h.tree.Apply(NewDeleteContainerTxn(path, now), h.zxid)
	}
	cases := []struct {
		path string
		now  int64
		want jute.ErrCode
	}{
		{"/ttl", 1100, jute.ErrBadVersion}, // not yet expired
		{"/fresh", 5000, jute.ErrBadVersion},
		{"/plain", 5000, jute.ErrBadVersion},
		{"/busy", 5000, jute.ErrNotEmpty},
		{"/ttlkid", 5000, jute.ErrNotEmpty},
		{"/gone", 5000, jute.ErrNoNode},
		{"/", 5000, jute.ErrBadArguments},
		{"/zookeeper", 5000, jute.ErrBadArguments},
		{"/used", 5000, jute.OK},
		{"/ttl", 1101, jute.OK},
	}
	for _, c := range cases {
		r := del(c.path, c.now)
		if r.Err != c.want {
			t.Errorf("deleteContainer %s at %d: %v want %v", c.path, c.now, r.Err, c.want)
		}
		if r.Err == jute.OK && (len(r.Events) != 2 || r.Events[0].Type != jute.EventNodeDeleted) {
			t.Errorf("events %+v", r.Events)
		}
	}
	if got := h.tree.ReapCandidates(1 << 40); len(got) != 0 {
		t.Fatalf("left: %v", got)
	}
	// The reaper needs no session.
	h.apply(&Txn{Type: jute.OpCloseSession, Session: testSession})
	h.write(jute.OpDelete, &jute.PathVersionRequest{Path: "/busy/c", Version: -1}) // expired: no effect
	h.sess = 0
	if r := del("/busy", 5000); r.Err != jute.ErrNotEmpty {
		t.Fatalf("%v", r.Err)
	}
}

func TestTTLNotReapedWithoutExtendedTypes(t *testing.T) {
	h := newHarness(t, Options{ExtendedTypes: true})
	h.write(jute.OpCreateTTL, &jute.CreateRequest{Path: "/ttl", ACL: openACL, Flags: 5, TTL: 1, HasTTL: true})
	h.tree.opts.ExtendedTypes = false
	if got := h.tree.ReapCandidates(1 << 40); len(got) != 0 {
		t.Fatalf("%v", got)
	}
}

// TestReapScanInChunks: ReapScan walks the reaper's index a chunk at a
// time (at most so many nodes examined, so many found), so a caller can
// let the tree's lock go between chunks; deletions and creations in
// between (which move paths within the index) never make it return a path
// twice, a full pass finds what ReapCandidates finds, and the index stays
// consistent (Verify).
func TestReapScanInChunks(t *testing.T) {
	h := newHarness(t, Options{ExtendedTypes: true})
	h.now = 1000
	const nodes = 40
	for i := range nodes {
		h.write(jute.OpCreateTTL, &jute.CreateRequest{Path: fmt.Sprintf("/ttl-%02d", i), ACL: openACL, Flags: 5, TTL: 100, HasTTL: true})
	}
	del := func(path string) {
		h.zxid++
		if r := h.tree.Apply(NewDeleteContainerTxn(path, 5000), h.zxid); r.Err != jute.OK {
			t.Fatalf("deleteContainer %s: %v", path, r.Err)
		}
	}
	scanAll := func(between func(chunk int)) []string {
		var out []string
		for from, done, chunk := 0, false, 0; !done; chunk++ {
			from, done, out = h.tree.ReapScan(5000, from, 7, 3, out) // at most 7 examined, 3 found
			if between != nil {
				between(chunk)
			}
		}
		return out
	}
	if got, want := scanAll(nil), h.tree.ReapCandidates(5000); !reflect.DeepEqual(sortedCopy(got), want) || len(want) != nodes {
		t.Fatalf("chunked scan found %v, want %v", sortedCopy(got), want)
	}

	// Between chunks, delete a node already seen and one not yet seen,
	// and create one.
	deleted := map[string]bool{}
	got := scanAll(func(chunk int) {
		for _, p := range []string{fmt.Sprintf("/ttl-%02d", chunk), fmt.Sprintf("/ttl-%02d", nodes-1-chunk)} {
			if !deleted[p] {
				deleted[p] = true
				del(p)
			}
		}
		h.write(jute.OpCreateTTL, &jute.CreateRequest{Path: fmt.Sprintf("/new-%02d", chunk), ACL: openACL, Flags: 5, TTL: 100, HasTTL: true})
	})
	seen := map[string]bool{}
	for _, p := range got {
		if seen[p] {
			t.Fatalf("%s returned twice", p)
		}
		seen[p] = true
	}
	if err := h.tree.Verify(); err != nil {
		t.Fatal(err)
	}
	left := h.tree.ReapCandidates(5000)
	if len(left) != len(h.tree.reapable) {
		t.Fatalf("%d nodes due of %d", len(left), len(h.tree.reapable))
	}
	for _, p := range left {
		if deleted[p] {
			t.Fatalf("deleted %s still due", p)
		}
	}
}

func sortedCopy(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
