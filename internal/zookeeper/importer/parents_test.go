package importer

import (
	"math"
	"strings"
	"testing"

	"github.com/zkraft/zkraft/internal/zookeeper/datadir"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// replayBodies builds logged transaction bodies for the tests.
type replayBodies struct{}

func (replayBodies) create(path string, ephemeral bool, parentCVersion int32) []byte {
	var w jute.Writer
	w.String(path)
	w.Buffer([]byte("x"))
	jute.WriteACLs(&w, []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}})
	w.Bool(ephemeral)
	w.Int(parentCVersion)
	return w.Buf
}

func (replayBodies) path(path string) []byte {
	var w jute.Writer
	w.String(path)
	return w.Buf
}

func (replayBodies) close(paths ...string) []byte {
	var w jute.Writer
	w.Int(int32(len(paths)))
	for _, p := range paths {
		w.String(p)
	}
	return w.Buf
}

// replayAll converts and replays logged transactions as Load does and
// returns how many of their changes failed (were already held).
func replayAll(t *testing.T, tree *znode.Tree, txns ...datadir.Txn) (settled int) {
	t.Helper()
	for _, tx := range txns {
		steps, err := convert(tx)
		if err != nil {
			t.Fatalf("zxid %#x: %v", tx.Zxid, err)
		}
		for _, s := range steps {
			if replayStep(tree, s, tx.Zxid) != jute.OK {
				settled++
			}
		}
	}
	return settled
}

// fuzzyTree is a snapshot at zxid 4 of "/" and "/p" whose /p has the given
// stored cversion and pzxid, with sessions 0x55 and 0x66.
func fuzzyTree(t *testing.T, cversion int32, pzxid int64, extra ...znode.StoredNode) *znode.Tree {
	t.Helper()
	open := []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}
	nodes := []znode.StoredNode{
		{Path: "/", ACL: open, Stat: jute.Stat{Cversion: 1, Pzxid: 1}},
		{Path: "/p", ACL: open, Stat: jute.Stat{Czxid: 1, Mzxid: 1, Cversion: cversion, Pzxid: pzxid}},
	}
	for _, n := range extra {
		n.ACL = open
		nodes = append(nodes, n)
	}
	tree, err := znode.Import(nodes, []znode.SessionInfo{
		{ID: 0x55, Timeout: 30000, Passwd: Passwd(0x55)},
		{ID: 0x66, Timeout: 30000, Passwd: Passwd(0x66)},
	}, 4, znode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// wantChildMeta checks /p's stored cversion and pzxid.
func wantChildMeta(t *testing.T, tree *znode.Tree, cversion int32, pzxid int64) {
	t.Helper()
	cv, pz, ok := tree.ChildMeta("/p")
	if !ok || cv != cversion || pz != pzxid {
		t.Errorf("/p stored cversion %d, pzxid %#x (exists %v); want %d, %#x", cv, pz, ok, cversion, pzxid)
	}
}

// TestReplayCreateAndDeleteTheSnapshotHeld: ZooKeeper wrote its snapshot
// named for zxid 4 while a create of /p/c (zxid 5, the parent's
// cversion to 2) and its delete (zxid 6) ran, and caught /p after both:
// stored cversion 2, pzxid 6, no child. Replayed, the create finds no node
// and succeeds, then the delete removes it. ZooKeeper's replay leaves /p as
// it was (the logged parentCVersion does not raise it); a live apply's
// cversion + 1 would count the create twice, and clients would see
// cversion 6 where ZooKeeper served 4 (CI saw this in e2e's
// TestImportZooKeeper, when the snapshot caught an ephemeral's session
// close).
func TestReplayCreateAndDeleteTheSnapshotHeld(t *testing.T) {
	var b replayBodies
	tree := fuzzyTree(t, 2, 6)
	if n := replayAll(t, tree,
		datadir.Txn{Type: jute.OpCreate, ClientID: 0x55, Zxid: 5, Time: 9, Body: b.create("/p/c", false, 2)},
		datadir.Txn{Type: jute.OpDelete, ClientID: 0x55, Zxid: 6, Time: 9, Body: b.path("/p/c")},
	); n != 0 {
		t.Errorf("%d changes failed, want 0", n)
	}
	wantChildMeta(t, tree, 2, 6)
	if _, st, err := tree.GetData("/p", replayer); err != nil || st.Cversion != 4 || st.NumChildren != 0 {
		t.Errorf("/p as clients see it: %+v %v; want cversion 4, no children", st, err)
	}
}

// TestReplayCreateRaisesToTheLoggedCversion: a create the snapshot does
// not hold sets the parent's cversion to the logged one (not one more than
// the parent's) and its pzxid to the create's zxid; a create2, container
// or TTL create too.
func TestReplayCreateRaisesToTheLoggedCversion(t *testing.T) {
	var b replayBodies
	tree := fuzzyTree(t, 1, 3)
	replayAll(t, tree, datadir.Txn{Type: jute.OpCreate2, ClientID: 0x55, Zxid: 5, Time: 9, Body: b.create("/p/c", false, 3)})
	wantChildMeta(t, tree, 3, 5)
	var w jute.Writer // createContainer: path, data, acl, parentCVersion
	w.String("/p/box")
	w.Buffer(nil)
	jute.WriteACLs(&w, []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}})
	w.Int(2) // below /p's 3: the container is created, /p's counters stay
	replayAll(t, tree, datadir.Txn{Type: jute.OpCreateContainer, ClientID: 0x55, Zxid: 6, Time: 9, Body: w.Buf})
	wantChildMeta(t, tree, 3, 5)
	if _, _, err := tree.GetData("/p/box", replayer); err != nil {
		t.Errorf("the container: %v", err)
	}
}

// TestReplayDeleteOfAGoneNodeRaisesPzxid: the snapshot caught a delete's
// child gone but its parent from before (ZooKeeper writes each node's
// child list with the node and skips children gone by the time it comes
// to them). Replayed, the delete fails as NoNode and, as in ZooKeeper,
// still raises the parent's pzxid; a delete older than the parent's pzxid
// leaves it.
func TestReplayDeleteOfAGoneNodeRaisesPzxid(t *testing.T) {
	var b replayBodies
	tree := fuzzyTree(t, 1, 3)
	if n := replayAll(t, tree, datadir.Txn{Type: jute.OpDelete, ClientID: 0x55, Zxid: 7, Time: 9, Body: b.path("/p/c")}); n != 1 {
		t.Errorf("%d changes failed, want the delete's 1", n)
	}
	wantChildMeta(t, tree, 1, 7)
	tree = fuzzyTree(t, 1, 9)
	replayAll(t, tree, datadir.Txn{Type: jute.OpDelete, ClientID: 0x55, Zxid: 7, Time: 9, Body: b.path("/p/c")})
	wantChildMeta(t, tree, 1, 9)
}

// TestReplayCloseSessionDeletesItsLoggedPaths: a closeSession's logged
// paths2Delete are deleted by path, as ZooKeeper's killSession does: one
// the snapshot already lacks raises its parent's pzxid, one now held by
// another session (the snapshot caught it re-created) is deleted all the
// same, and the session's own ephemerals go with it.
func TestReplayCloseSessionDeletesItsLoggedPaths(t *testing.T) {
	var b replayBodies
	tree := fuzzyTree(t, 2, 3,
		znode.StoredNode{Path: "/p/mine", Stat: jute.Stat{Czxid: 2, Mzxid: 2, Pzxid: 2, EphemeralOwner: 0x55}},
		znode.StoredNode{Path: "/p/taken", Stat: jute.Stat{Czxid: 3, Mzxid: 3, Pzxid: 3, EphemeralOwner: 0x66}},
	)
	replayAll(t, tree, datadir.Txn{Type: jute.OpCloseSession, ClientID: 0x55, Zxid: 8, Time: 9, Body: b.close("/p/gone", "/p/taken", "/p/mine")})
	for _, p := range []string{"/p/mine", "/p/taken"} {
		if _, _, err := tree.GetData(p, replayer); err == nil {
			t.Errorf("%s is still there after the close", p)
		}
	}
	wantChildMeta(t, tree, 2, 8)
	if _, ok := tree.Session(0x55); ok {
		t.Error("session 0x55 is still open")
	}
	// A closeSession logged before ZooKeeper 3.6 has no body.
	tree = fuzzyTree(t, 1, 3, znode.StoredNode{Path: "/p/mine", Stat: jute.Stat{Czxid: 2, Mzxid: 2, Pzxid: 2, EphemeralOwner: 0x55}})
	replayAll(t, tree, datadir.Txn{Type: jute.OpCloseSession, ClientID: 0x55, Zxid: 8, Time: 9})
	wantChildMeta(t, tree, 1, 8)
}

// TestSettleEphemeralsOfSessionsTheSnapshotLacked: a fuzzy snapshot holds
// ephemerals of sessions it does not list. One whose session opens in the
// replay is the session's from then on: its close, logged before ZooKeeper
// 3.6 without its paths, deletes it at the close's zxid. One whose
// session never opens again is deleted at the last zxid, as ZooKeeper's
// load kills dead sessions' ephemerals. A container's owner field names no
// session either, and it stays.
func TestSettleEphemeralsOfSessionsTheSnapshotLacked(t *testing.T) {
	snap := &datadir.Snapshot{Zxid: 4, Sessions: []datadir.Session{{ID: 0x55, Timeout: 30000}}, Nodes: []datadir.Node{
		{Path: "/", ACL: datadir.OpenACL, Stat: jute.Stat{Cversion: 2, Pzxid: 1}},
		{Path: "/p", ACL: datadir.OpenACL, Stat: jute.Stat{Czxid: 1, Mzxid: 1, Cversion: 4, Pzxid: 3}},
		{Path: "/p/box", ACL: datadir.OpenACL, Stat: jute.Stat{Czxid: 2, Mzxid: 2, Pzxid: 2, EphemeralOwner: math.MinInt64}},
		{Path: "/p/late", ACL: datadir.OpenACL, Stat: jute.Stat{Czxid: 4, Mzxid: 4, Pzxid: 4, EphemeralOwner: 0x88}},
		{Path: "/p/mine", ACL: datadir.OpenACL, Stat: jute.Stat{Czxid: 2, Mzxid: 2, Pzxid: 2, EphemeralOwner: 0x55}},
		{Path: "/q", ACL: datadir.OpenACL, Stat: jute.Stat{Czxid: 1, Mzxid: 1, Cversion: 1, Pzxid: 3}},
		{Path: "/q/dead", ACL: datadir.OpenACL, Stat: jute.Stat{Czxid: 3, Mzxid: 3, Pzxid: 3, EphemeralOwner: 0x77}},
	}}
	tree, dangling, unowned, err := fromSnapshot(snap, znode.Options{}, Passwd)
	if err != nil || len(unowned) != 2 || len(unowned[0x88]) != 1 || len(unowned[0x77]) != 1 {
		t.Fatalf("unowned %v, %v; want /p/late and /q/dead by owner (not the container)", unowned, err)
	}
	var w jute.Writer
	w.Int(30000)
	res := &Result{Tree: tree, LastZxid: 9}
	if err := res.replay([]datadir.Txn{
		{Type: jute.OpCreateSession, ClientID: 0x88, Zxid: 5, Time: 9, Body: w.Buf},
		{Type: jute.OpCloseSession, ClientID: 0x88, Zxid: 6, Time: 9},
	}, dangling, unowned); err != nil {
		t.Fatal(err)
	}
	if len(res.DeadEphemerals) != 1 || res.DeadEphemerals[0] != "/q/dead" {
		t.Errorf("dead ephemerals %v, want [/q/dead]", res.DeadEphemerals)
	}
	wantChildMeta(t, tree, 4, 6) // /late went with its session's close
	if _, pz, _ := tree.ChildMeta("/q"); pz != 9 {
		t.Errorf("/q's pzxid %#x, want 0x9 (the last zxid)", pz)
	}
	for _, p := range []string{"/p/box", "/p/mine"} {
		if _, _, err := tree.GetData(p, replayer); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	for _, p := range []string{"/p/late", "/q/dead"} {
		if _, _, err := tree.GetData(p, replayer); err == nil {
			t.Errorf("%s is still there", p)
		}
	}
}

// TestDanglingACLSetByTheReplay: ZooKeeper writes its ACL cache before
// its nodes, so a fuzzy snapshot can hold a node whose ACL index the cache
// lacks (CI saw /mig/cfg's setACL caught this way). The replayed setACL,
// whose version the node already has, sets the logged ACL as ZooKeeper's
// does; a create that finds its node sets its ACL too. A node no logged
// change gives an ACL (a setData sets none) fails the import.
func TestDanglingACLSetByTheReplay(t *testing.T) {
	digest := []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "digest", ID: "alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E="}}}
	read := []jute.ACL{{Perms: jute.PermRead, ID: jute.Id{Scheme: "world", ID: "anyone"}}}
	snap := &datadir.Snapshot{Zxid: 4, ACLs: map[int64][]jute.ACL{1: read}, Nodes: []datadir.Node{
		{Path: "/", ACL: datadir.OpenACL, Stat: jute.Stat{Cversion: 3, Pzxid: 4}},
		{Path: "/cfg", ACL: 2, Stat: jute.Stat{Czxid: 2, Mzxid: 2, Pzxid: 2, Aversion: 1}},
		{Path: "/made", ACL: 3, Stat: jute.Stat{Czxid: 5, Mzxid: 5, Pzxid: 5}},
		{Path: "/lost", ACL: 4, Stat: jute.Stat{Czxid: 3, Mzxid: 3, Pzxid: 3}},
	}}
	tree, dangling, _, err := fromSnapshot(snap, znode.Options{}, Passwd)
	if err != nil || len(dangling) != 3 {
		t.Fatalf("dangling %v, %v; want /cfg, /made and /lost", dangling, err)
	}
	var setACL jute.Writer // path, acl, version
	setACL.String("/cfg")
	jute.WriteACLs(&setACL, digest)
	setACL.Int(1)
	var create jute.Writer
	create.String("/made")
	create.Buffer(nil)
	jute.WriteACLs(&create, read)
	create.Bool(false)
	create.Int(3)
	var setData jute.Writer // on /lost: sets no ACL
	setData.String("/lost")
	setData.Buffer([]byte("d"))
	setData.Int(1)
	for _, tx := range []datadir.Txn{
		{Type: jute.OpSetACL, ClientID: 0x55, Zxid: 5, Time: 9, Body: setACL.Buf},
		{Type: jute.OpCreate, ClientID: 0x55, Zxid: 6, Time: 9, Body: create.Buf},
		{Type: jute.OpSetData, ClientID: 0x55, Zxid: 7, Time: 9, Body: setData.Buf},
	} {
		steps, err := convert(tx)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range steps {
			if err := dangling.settle(tree, s, replayStep(tree, s, tx.Zxid)); err != nil {
				t.Fatal(err)
			}
		}
	}
	ids := []jute.Id{{Scheme: "super"}}
	if acl, st, err := tree.GetACL("/cfg", ids); err != nil || len(acl) != 1 || acl[0] != digest[0] || st.Aversion != 1 {
		t.Errorf("/cfg: %v %+v %v; want the logged digest ACL at aversion 1", acl, st, err)
	}
	if acl, _, err := tree.GetACL("/made", ids); err != nil || len(acl) != 1 || acl[0] != read[0] {
		t.Errorf("/made: %v %v; want the create's ACL", acl, err)
	}
	if err := dangling.check(tree); err == nil || !strings.Contains(err.Error(), "/lost") {
		t.Errorf("check: %v; want /lost named", err)
	}
}

// FuzzReplay replays one logged transaction of any type and body over a
// small fuzzy tree, with its ACL rules: a damaged log fails the import or
// changes the tree, never panics.
func FuzzReplay(f *testing.F) {
	var b replayBodies
	f.Add(int32(jute.OpCreate), b.create("/p/c", false, 2))
	f.Add(int32(jute.OpCreate), b.create("", true, -1))
	f.Add(int32(jute.OpDelete), b.path("nochild"))
	f.Add(int32(jute.OpCloseSession), b.close("", "/p", "x"))
	f.Add(int32(jute.OpSetACL), b.path("/p"))
	f.Add(int32(jute.OpMulti), []byte{0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, typ int32, body []byte) {
		tree := fuzzyTree(t, 1, 3, znode.StoredNode{Path: "/p/e", Stat: jute.Stat{Czxid: 2, Mzxid: 2, Pzxid: 2, EphemeralOwner: 0x77}})
		dangling := danglingACLs{"/p": 9}
		steps, err := convert(datadir.Txn{Type: jute.Op(typ), ClientID: 0x55, Zxid: 5, Time: 9, Body: body})
		if err != nil {
			return
		}
		for _, s := range steps {
			if s.txn == nil {
				continue
			}
			_ = dangling.settle(tree, s, replayStep(tree, s, 5))
		}
		_ = dangling.check(tree)
		tree.SettleEphemerals(5, []string{"/p/e", "/p", "", "x"})
	})
}
