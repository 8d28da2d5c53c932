package importer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkraft/zkraft/internal/zookeeper/datadir"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// copyGolden copies the golden directory without the snapshots named
// drop, so the replay starts from an older one.
func copyGolden(t *testing.T, drop ...string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "version-2"), 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Join(golden, "version-2"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "snapshot.") && strings.Contains(","+strings.Join(drop, ",")+",", ","+e.Name()+",") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(golden, "version-2", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "version-2", e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestLoadTTLWithoutExtendedTypes imports the golden directory, whose
// /ttl is a TTL node ZooKeeper created at zxid 0x9, into a tree without
// extended types (issue #38): from the newest snapshot, which holds the
// node, and from snapshot.7, before it, so the logged createTTL is
// replayed. Either way the tree is ZooKeeper's (the dump: /ttl there,
// the root's counters counting it) and /ttl is a TTL node. Before, the
// snapshot's /ttl read as an ephemeral of a session that does not exist,
// deleted at the end, and the logged create failed as Unimplemented and
// was reported as "already held".
func TestLoadTTLWithoutExtendedTypes(t *testing.T) {
	want, err := os.ReadFile(filepath.Join(golden, "dump.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, dir, snapshot string
	}{
		{"snapshot holds it", golden, "snapshot.15"},
		{"log creates it", copyGolden(t, "snapshot.f", "snapshot.15"), "snapshot.7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Load(tc.dir, "", znode.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(res.Snapshot, tc.snapshot) {
				t.Fatalf("loaded %s, want %s", res.Snapshot, tc.snapshot)
			}
			if got := dumpTree(t, res.Tree); got != strings.TrimSpace(string(want)) {
				t.Errorf("imported tree differs from ZooKeeper's\ngot:\n%s\nwant:\n%s", got, want)
			}
			if res.NotApplied != 0 || len(res.DeadEphemerals) != 0 {
				t.Errorf("not applied %d %v, dead ephemerals %v; want none", res.NotApplied, res.Unapplied, res.DeadEphemerals)
			}
			for _, c := range res.Conflicts {
				if strings.Contains(c, "unimplemented") {
					t.Errorf("already held: %s", c)
				}
			}
			var owner int64
			res.Tree.Export(func(n znode.StoredNode) {
				if n.Path == "/ttl" {
					owner = n.Stat.EphemeralOwner
				}
			})
			if !znode.IsTTLOwner(owner) {
				t.Errorf("/ttl stored owner %#x: not a TTL node", owner)
			}
		})
	}
}

// TestReplayReportsWhatItDidNotApply: a replayed change the tree refuses
// for a reason a fuzzy snapshot does not explain is counted and
// described as not applied, with its zxid, type, path and code; one the
// snapshot already holds (NodeExists) as already held; a quota the
// server enforces refuses nothing ZooKeeper logged.
func TestReplayReportsWhatItDidNotApply(t *testing.T) {
	open := []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}
	tree, err := znode.Import([]znode.StoredNode{
		{Path: "/", ACL: open, Stat: jute.Stat{Cversion: 4, Pzxid: 4}},
		{Path: "/zookeeper", ACL: open},
		{Path: "/zookeeper/quota", ACL: open, Stat: jute.Stat{Cversion: 1, Pzxid: 1}},
		{Path: "/zookeeper/quota/q", ACL: open, Stat: jute.Stat{Czxid: 1, Mzxid: 1, Cversion: 2, Pzxid: 1}},
		{Path: "/zookeeper/quota/q/zookeeper_limits", Data: []byte("count=-1,bytes=-1,countHardLimit=1"), ACL: open, Stat: jute.Stat{Czxid: 1, Mzxid: 1, Pzxid: 1}},
		{Path: "/zookeeper/quota/q/zookeeper_stats", Data: []byte("count=1,bytes=0"), ACL: open, Stat: jute.Stat{Czxid: 1, Mzxid: 1, Pzxid: 1}},
		{Path: "/e", ACL: open, Stat: jute.Stat{Czxid: 2, Mzxid: 2, Pzxid: 2, EphemeralOwner: 0x55}},
		{Path: "/p", ACL: open, Stat: jute.Stat{Czxid: 3, Mzxid: 3, Pzxid: 3}},
		{Path: "/q", ACL: open, Stat: jute.Stat{Czxid: 4, Mzxid: 4, Pzxid: 4}},
	}, []znode.SessionInfo{{ID: 0x55, Timeout: 30000, Passwd: Passwd(0x55)}}, 4, znode.Options{EnforceQuota: true})
	if err != nil {
		t.Fatal(err)
	}
	var b replayBodies
	f := FollowTree(tree)
	for _, txn := range []datadir.Txn{
		{Type: jute.OpCreate, ClientID: 0x55, Zxid: 5, Time: 5, Body: b.create("/p", false, 3)},   // held already
		{Type: jute.OpCreate, ClientID: 0x55, Zxid: 6, Time: 6, Body: b.create("/e/x", false, 1)}, // refused here
		{Type: jute.OpCreate, ClientID: 0x55, Zxid: 7, Time: 7, Body: b.create("/q/y", false, 1)}, // past the quota
	} {
		if err := f.Apply(txn); err != nil {
			t.Fatal(err)
		}
	}
	if f.Settled != 1 || len(f.Conflicts) != 1 || !strings.Contains(f.Conflicts[0], "zxid 0x5") {
		t.Errorf("already held: %d %q; want the create of /p at 0x5", f.Settled, f.Conflicts)
	}
	if f.NotApplied != 1 || len(f.Unapplied) != 1 || f.Unapplied[0] != "zxid 0x6 (type 1 /e/x): "+jute.ErrNoChildrenForEphem.Error() {
		t.Errorf("not applied: %d %q; want the create of /e/x at 0x6, no children for ephemerals", f.NotApplied, f.Unapplied)
	}
	if _, st, err := tree.GetData("/q/y", nil); err != nil || st.Czxid != 7 {
		t.Errorf("/q/y past the enforced quota: %+v %v; want created at 0x7", st, err)
	}
}
