package znode

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"reflect"
	"runtime"
	"testing"
	"testing/iotest"

	"github.com/zkraft/zkraft/jute"
)

func snapshotTree(t *testing.T) *harness {
	h := newHarness(t, Options{ExtendedTypes: true})
	h.apply(&Txn{Type: jute.OpCreateSession, Session: 77, Timeout: 5000, Passwd: []byte("0123456789abcdef")})
	h.mustCreate("/a", nil, 0)
	h.mustCreate("/a/empty", []byte{}, 0)
	h.mustCreate("/a/s", []byte("seq"), 2)
	h.mustCreate("/a/e", []byte("eph"), 1)
	h.write(jute.OpDelete, &jute.PathVersionRequest{Path: "/a/empty", Version: -1})
	h.write(jute.OpCreateContainer, &jute.CreateRequest{Path: "/c", ACL: openACL, Flags: 4})
	h.write(jute.OpCreateTTL, &jute.CreateRequest{Path: "/ttl", ACL: openACL, Flags: 5, TTL: 1000, HasTTL: true})
	h.write(jute.OpCreate, &jute.CreateRequest{Path: "/b", ACL: world(jute.PermRead)})
	h.write(jute.OpSetData, &jute.SetDataRequest{Path: "/a", Data: []byte("x"), Version: -1})
	h.write(jute.OpSetACL, &jute.SetACLRequest{Path: "/a", ACL: world(jute.PermRead | jute.PermCreate), Version: -1})
	h.sess = 77
	h.mustCreate("/e77", nil, 1)
	return h
}

// treeDump captures everything observable plus internal fields.
func treeDump(t *testing.T, tr *Tree) map[string]any {
	out := map[string]any{"zxid": tr.LastZxid(), "stats": tr.Stats(), "sessions": tr.Sessions()}
	for p, n := range allNodes(tr) {
		st, _ := tr.Exists(p, nil)
		out["node "+p] = []any{st, n.data == nil, string(n.data), tr.aclOf(n), n.cversion(), n.kind(), n.owner}
	}
	for _, s := range tr.Sessions() {
		out["eph"+string(rune(s.ID))] = tr.GetEphemerals(s.ID, "")
	}
	return out
}

func TestSnapshotRoundTrip(t *testing.T) {
	h := snapshotTree(t)
	var buf bytes.Buffer
	if err := h.tree.WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSnapshot(bytes.NewReader(buf.Bytes()), Options{ExtendedTypes: true})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := treeDump(t, h.tree), treeDump(t, got); !reflect.DeepEqual(a, b) {
		t.Fatalf("round trip differs:\n%v\n%v", a, b)
	}
	// The restored tree keeps working: the next sequence number and
	// closeSession of a restored session.
	h2 := &harness{t: t, tree: got, zxid: h.zxid, now: h.now, ids: ipIDs, sess: testSession}
	if p := h2.mustCreate("/a/s", nil, 2); p != "/a/s0000000003" {
		t.Fatalf("seq after restore %s", p)
	}
	if r := h2.apply(&Txn{Type: jute.OpCloseSession, Session: 77}); len(r.Events) != 2 {
		t.Fatalf("close restored session %+v", r)
	}
	// Deterministic output.
	var again bytes.Buffer
	h.tree.WriteSnapshot(&again)
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Fatal("snapshot not deterministic")
	}
}

func TestSnapshotRejectsGarbage(t *testing.T) {
	h := snapshotTree(t)
	var buf bytes.Buffer
	if err := h.tree.WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	for i := 0; i < len(good); i++ {
		if _, err := ReadSnapshot(bytes.NewReader(good[:i]), Options{}); err == nil {
			t.Fatalf("truncation at %d accepted", i)
		}
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		b := append([]byte(nil), good...)
		for j := 0; j < 1+rng.Intn(4); j++ {
			b[rng.Intn(len(b))] ^= byte(1 + rng.Intn(255))
		}
		if _, err := ReadSnapshot(bytes.NewReader(b), Options{}); err == nil {
			t.Fatalf("corruption %d accepted", i)
		} else if !errors.Is(err, ErrBadSnapshot) {
			t.Fatalf("error does not wrap ErrBadSnapshot: %v", err)
		}
	}
	for _, g := range [][]byte{nil, []byte("ZKRS"), []byte("garbage garbage garbage")} {
		if _, err := ReadSnapshot(bytes.NewReader(g), Options{}); err == nil {
			t.Fatalf("%q accepted", g)
		}
	}
}

// FuzzReadSnapshot checks ReadSnapshot never panics.
func FuzzReadSnapshot(f *testing.F) {
	var buf bytes.Buffer
	NewTree(Options{}).WriteSnapshot(&buf)
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		ReadSnapshot(bytes.NewReader(b), Options{})
	})
}

func TestClone(t *testing.T) {
	h := snapshotTree(t)
	c := h.tree.Clone()
	var before bytes.Buffer
	if err := c.WriteSnapshot(&before); err != nil {
		t.Fatal(err)
	}
	want := treeDump(t, c)
	// Mutate the original in every way.
	h.sess = testSession
	h.mustCreate("/a/new", nil, 1)
	h.setData("/a", "changed")
	h.write(jute.OpSetACL, &jute.SetACLRequest{Path: "/b", ACL: openACL, Version: -1})
	h.write(jute.OpDelete, &jute.PathVersionRequest{Path: "/c", Version: -1})
	h.apply(&Txn{Type: jute.OpCloseSession, Session: 77})
	if got := treeDump(t, c); !reflect.DeepEqual(got, want) {
		t.Fatalf("clone changed:\n%v\n%v", got, want)
	}
	var after bytes.Buffer
	c.WriteSnapshot(&after)
	if !bytes.Equal(before.Bytes(), after.Bytes()) {
		t.Fatal("clone snapshot changed")
	}
	// And the clone keeps working independently.
	h2 := &harness{t: t, tree: c, zxid: 1000, now: 1, ids: ipIDs, sess: 77}
	h2.mustCreate("/from-clone", nil, 1)
	if _, err := h.tree.Exists("/from-clone", nil); err == nil {
		t.Fatal("clone write visible in original")
	}
}

func TestSnapshotErrorsWrap(t *testing.T) {
	var buf bytes.Buffer
	NewTree(Options{}).WriteSnapshot(&buf)
	_, err := ReadSnapshot(bytes.NewReader(buf.Bytes()[:20]), Options{})
	if !errors.Is(err, ErrBadSnapshot) || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("%v", err)
	}
	boom := errors.New("disk on fire")
	_, err = ReadSnapshot(io.MultiReader(bytes.NewReader(buf.Bytes()[:20]), iotest.ErrReader(boom)), Options{})
	if !errors.Is(err, boom) {
		t.Fatalf("%v", err)
	}
}

// TestCloneSplit clones a tree large enough to be split among goroutines
// (a big flat directory, many middling ones, small ones) and checks the
// clone is the same tree and stays so while the original changes.
func TestCloneSplit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a tree of ~70k znodes")
	}
	defer runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0)))
	runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0)))
	h := newHarness(t, Options{})
	h.mustCreate("/flat", nil, 0)
	for i := range 40_000 {
		h.mustCreate(fmt.Sprintf("/flat/n%05d", i), []byte("v"), 0)
	}
	for d := range 100 {
		dir := fmt.Sprintf("/d%03d", d)
		h.mustCreate(dir, nil, 0)
		for i := range 300 {
			h.mustCreate(fmt.Sprintf("%s/n%03d", dir, i), nil, 0)
		}
		h.mustCreate(dir+"/small", nil, 0)
		h.mustCreate(dir+"/small/leaf", []byte("x"), 1)
	}
	if n := h.tree.Stats().Nodes; n < parallelCloneMin {
		t.Fatalf("%d nodes: too few to split", n)
	}
	var want bytes.Buffer
	if err := h.tree.WriteSnapshot(&want); err != nil {
		t.Fatal(err)
	}
	c := h.tree.Clone()
	h.setData("/flat/n00007", "changed")
	h.write(jute.OpDelete, &jute.PathVersionRequest{Path: "/d042/n007", Version: -1})
	h.mustCreate("/d001/new", nil, 0)
	h.apply(&Txn{Type: jute.OpCloseSession, Session: testSession})
	var got bytes.Buffer
	if err := c.WriteSnapshot(&got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatal("the split clone differs from the tree it was taken from")
	}
	checkInvariants(t, c)
}
