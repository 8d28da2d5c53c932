package ensemble

import (
	"errors"
	"sync"
	"testing"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// TestSeedStartsFromTree: a member seeded with a tree at index 5000 serves
// that tree (its session included), gives the next write zxid 5001 or
// above, and comes back with both after a restart; a second Seed of the
// same directory is refused.
func TestSeedStartsFromTree(t *testing.T) {
	dir := t.TempDir()
	tree := znode.NewTree(znode.Options{})
	if r := tree.Apply(&znode.Txn{Type: jute.OpCreateSession, Session: 7, Time: 1, Timeout: 30000, Passwd: make([]byte, 16)}, 4000); r.Err != jute.OK {
		t.Fatal(r.Err)
	}
	if r := tree.Apply(createTxn(7, "/imported", jute.FlagEphemeral, 2), 4999); r.Err != jute.OK {
		t.Fatal(r.Err)
	}
	if err := Seed(Config{DataDir: dir}, tree, 5000); err != nil {
		t.Fatal(err)
	}
	if err := Seed(Config{DataDir: dir}, tree, 5000); !errors.Is(err, ErrHasState) {
		t.Fatalf("second seed: %v, want ErrHasState", err)
	}

	n := openNode(t, dir)
	if n.LastZxid() != 5000 {
		t.Errorf("last zxid after seeding %d, want 5000", n.LastZxid())
	}
	res, err := n.ProposeWait(createTxn(7, "/next", 0, 3))
	if err != nil || res.Err != jute.OK {
		t.Fatalf("create after seeding: %v %v", err, res)
	}
	if z := res.Resp.(*jute.Create2Response).Stat.Czxid; z <= 5000 {
		t.Errorf("first zxid after seeding %d, want above 5000", z)
	}
	check := func(n *Node) {
		t.Helper()
		tr := n.RLockTree()
		defer n.RUnlockTree()
		if _, st, err := tr.GetData("/imported", nil); err != nil || st.EphemeralOwner != 7 || st.Czxid != 4999 {
			t.Errorf("/imported: %+v %v", st, err)
		}
		if _, _, err := tr.GetData("/next", nil); err != nil {
			t.Errorf("/next: %v", err)
		}
		if _, ok := tr.Session(7); !ok {
			t.Error("the seeded session is gone")
		}
	}
	check(n)
	last := n.LastZxid()
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	m := openNode(t, dir)
	defer m.Close()
	check(m)
	if m.LastZxid() < last {
		t.Errorf("after restart last zxid %d < %d", m.LastZxid(), last)
	}
}

// TestSeedEnsemble: three members seeded alike elect a leader, replicate
// from index 9001 on and agree on the seeded and the new state.
func TestSeedEnsemble(t *testing.T) {
	seeded := map[int64]bool{}
	var mu sync.Mutex
	c := newCluster(t, 3, func(cfg *Config) {
		mu.Lock()
		defer mu.Unlock()
		if seeded[cfg.ID] {
			return
		}
		seeded[cfg.ID] = true
		tree := znode.NewTree(znode.Options{})
		if r := tree.Apply(&znode.Txn{Type: jute.OpCreateSession, Session: 7, Time: 1, Timeout: 30000, Passwd: make([]byte, 16)}, 8000); r.Err != jute.OK {
			t.Error(r.Err)
		}
		if r := tree.Apply(createTxn(7, "/imported", 0, 2), 8999); r.Err != jute.OK {
			t.Error(r.Err)
		}
		if err := Seed(*cfg, tree, 9000); err != nil {
			t.Error(err)
		}
	})
	res := mustPropose(t, c.leader(), createTxn(7, "/after", 0, 3))
	if z := res.Zxid; z <= 9000 {
		t.Fatalf("first zxid %d, want above 9000", z)
	}
	c.converged(res.Zxid)
	// A seeded ensemble is a new one: level 2, with an id of its own.
	c.waitEnsemble(2)
	for id, n := range c.nodes {
		for _, p := range []string{"/imported", "/after"} {
			if _, err := treeStat(n, p); err != nil {
				t.Errorf("member %d: %s: %v", id, p, err)
			}
		}
	}
}
