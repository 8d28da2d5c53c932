package importer

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zkraft/zkraft/internal/zookeeper/datadir"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// golden is a ZooKeeper 3.8 data directory (snapCount=10, so several
// snapshots and logs) and dump.txt, every znode as that server served it
// when the directory was copied (zkCli: sequential, ephemeral, container,
// TTL and digest-ACL nodes, setData, setAcl, setquota, deletes; the
// ephemeral's session closed, then one more session opened and closed).
// It was dumped with go-zookeeper.
var golden = filepath.Join("..", "datadir", "testdata", "zk38")

// dumpTree renders every znode of t as the golden dump does.
func dumpTree(t *testing.T, tree *znode.Tree) string {
	t.Helper()
	ids := []jute.Id{{Scheme: "super", ID: "test"}}
	var lines []string
	var walk func(p string)
	walk = func(p string) {
		data, st, err := tree.GetData(p, ids)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		acl, _, err := tree.GetACL(p, ids)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		var as []string
		for _, a := range acl {
			as = append(as, fmt.Sprintf("%s:%s:%d", a.ID.Scheme, a.ID.ID, a.Perms))
		}
		lines = append(lines, fmt.Sprintf("%s data=%q acl=%s czxid=%#x mzxid=%#x pzxid=%#x ctime=%d mtime=%d version=%d cversion=%d aversion=%d owner=%#x len=%d children=%d",
			p, data, strings.Join(as, ","), st.Czxid, st.Mzxid, st.Pzxid, st.Ctime, st.Mtime, st.Version, st.Cversion, st.Aversion, st.EphemeralOwner, st.DataLength, st.NumChildren))
		kids, _, err := tree.GetChildren(p, ids)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, k := range kids {
			walk(strings.TrimSuffix(p, "/") + "/" + k)
		}
	}
	walk("/")
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// TestLoadMatchesZooKeeper loads the golden directory (its newest
// snapshot, 0x15, and the log after it: a delete, the closeSession that
// removes the ephemeral, one more session's open and close) and finds
// every znode as ZooKeeper served it: data, ACL and every Stat field,
// including ZooKeeper's stored cversion, the TTL and container nodes and
// the recounted quota stats. The snapshot is fuzzy: it already lacks the
// node the delete at 0x16 removes, so that replay fails as NoNode and
// changes nothing, as in ZooKeeper.
func TestLoadMatchesZooKeeper(t *testing.T) {
	want, err := os.ReadFile(filepath.Join(golden, "dump.txt"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Load(golden, "", znode.Options{ExtendedTypes: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := dumpTree(t, res.Tree); got != strings.TrimSpace(string(want)) {
		t.Errorf("imported tree differs from ZooKeeper's\ngot:\n%s\nwant:\n%s", got, want)
	}
	if !strings.HasSuffix(res.Snapshot, "snapshot.15") || res.Replayed != 4 || res.Settled != 1 || res.LastZxid != 0x19 {
		t.Errorf("snapshot %s, replayed %d, settled %d %v, last zxid %#x; want snapshot.15, 4, 1, 0x19",
			res.Snapshot, res.Replayed, res.Settled, res.Conflicts, res.LastZxid)
	}
	if res.Tree.LastZxid() != 0x19 || len(res.Tree.Sessions()) != 0 {
		t.Errorf("tree last zxid %#x, sessions %v", res.Tree.LastZxid(), res.Tree.Sessions())
	}
}

// TestFuzzyCreateRepair: a logged create whose node a fuzzy snapshot
// already holds fails as NodeExists and, as in ZooKeeper, raises the
// parent's cversion to the logged one and its pzxid to the create's zxid
// (the snapshot caught the child but not its parent's counters).
func TestFuzzyCreateRepair(t *testing.T) {
	open := []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}
	tree, err := znode.Import([]znode.StoredNode{
		{Path: "/", ACL: open, Stat: jute.Stat{Cversion: 1, Pzxid: 1}},
		{Path: "/p", ACL: open, Stat: jute.Stat{Czxid: 1, Mzxid: 1, Pzxid: 1}},
		{Path: "/p/c", ACL: open, Stat: jute.Stat{Czxid: 2, Mzxid: 2, Pzxid: 2}},
	}, nil, 1, znode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var w jute.Writer
	w.String("/p/c")
	w.Buffer([]byte("c"))
	jute.WriteACLs(&w, open)
	w.Bool(false)
	w.Int(1) // parentCVersion
	steps, err := convert(datadir.Txn{Type: jute.OpCreate, ClientID: 0x55, Zxid: 2, Time: 5, Body: w.Buf})
	if err != nil || len(steps) != 1 {
		t.Fatal(steps, err)
	}
	s := steps[0]
	if !s.repair || s.path != "/p/c" || s.parentCVersion != 1 {
		t.Fatalf("step %+v: want a repair of /p/c with parentCVersion 1", s)
	}
	if code := replayStep(tree, s, 2); code != jute.ErrNodeExists { // session 0x55 is unknown: opened for it
		t.Fatalf("replayed create: %v, want NodeExists", code)
	}
	_, st, err := tree.GetData("/p", nil)
	if err != nil || st.Pzxid != 2 || st.Cversion != 1*2-1 {
		t.Fatalf("/p after the repair: %+v %v; want pzxid 2, stored cversion 1 (seen as 1)", st, err)
	}
	if s := tree.Sessions(); len(s) != 0 {
		t.Fatalf("the session opened for the replay is still there: %v", s)
	}
}

// TestFuzzySetDataReplay: a setData the fuzzy snapshot already holds
// changes nothing when replayed (ZooKeeper's replay sets the logged
// version); the next one applies. A multi replays op by op, so the op the
// snapshot holds fails alone.
func TestFuzzySetDataReplay(t *testing.T) {
	open := []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}
	tree, err := znode.Import([]znode.StoredNode{
		{Path: "/", ACL: open, Stat: jute.Stat{Cversion: 1, Pzxid: 1}},
		{Path: "/n", Data: []byte("v2"), ACL: open, Stat: jute.Stat{Czxid: 1, Mzxid: 3, Pzxid: 1, Version: 2}},
	}, []znode.SessionInfo{{ID: 0x55, Timeout: 30000, Passwd: Passwd(0x55)}}, 2, znode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	setData := func(data string, version int32) []byte {
		var w jute.Writer
		w.String("/n")
		w.Buffer([]byte(data))
		w.Int(version)
		return w.Buf
	}
	replay := func(typ jute.Op, zxid int64, body []byte) (settled int) {
		t.Helper()
		steps, err := convert(datadir.Txn{Type: typ, ClientID: 0x55, Zxid: zxid, Time: 9, Body: body})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range steps {
			if r := apply(tree, s.txn, zxid); r.Err != jute.OK {
				settled++
			}
		}
		return settled
	}
	if n := replay(jute.OpSetData, 3, setData("v2", 2)); n != 1 {
		t.Errorf("the setData the snapshot holds: %d settled, want 1", n)
	}
	if n := replay(jute.OpSetData, 4, setData("v3", 3)); n != 0 {
		t.Errorf("the next setData: %d settled, want 0", n)
	}
	var m jute.Writer // a multi: setData to version 4, then a create
	m.Int(2)
	m.Int(int32(jute.OpSetData))
	m.Buffer(setData("v3", 3)) // already applied above: settles
	m.Int(int32(jute.OpCreate2))
	var c jute.Writer
	c.String("/n2")
	c.Buffer(nil)
	jute.WriteACLs(&c, open)
	c.Bool(false)
	c.Int(2)
	m.Buffer(c.Buf)
	if n := replay(jute.OpMulti, 5, m.Buf); n != 1 {
		t.Errorf("a multi half held: %d settled, want 1", n)
	}
	data, st, err := tree.GetData("/n", nil)
	if err != nil || string(data) != "v3" || st.Version != 3 || st.Mzxid != 4 {
		t.Errorf("/n = %q %+v %v, want v3 at version 3, mzxid 4", data, st, err)
	}
	if _, st, err := tree.GetData("/n2", nil); err != nil || st.Czxid != 5 {
		t.Errorf("/n2 from the multi: %+v %v", st, err)
	}
}
