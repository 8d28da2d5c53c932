package importer

import (
	"strings"
	"testing"

	"github.com/zkraft/zkraft/internal/zookeeper/datadir"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// TestFromSnapshot builds a consistent snapshot's tree with the given
// passwords, and refuses one with an ACL index or an ephemeral's session
// it lacks (only a fuzzy snapshot has those, and it needs its logs).
func TestFromSnapshot(t *testing.T) {
	root := datadir.Node{Path: "/", ACL: datadir.OpenACL}
	zk := datadir.Node{Path: "/zookeeper", ACL: datadir.OpenACL}
	eph := datadir.Node{Path: "/e", ACL: datadir.OpenACL, Stat: jute.Stat{Czxid: 2, Mzxid: 2, Pzxid: 2, EphemeralOwner: 0x77}}
	pw := func(id int64) []byte { return []byte(strings.Repeat("p", 16)) }
	s := &datadir.Snapshot{Zxid: 5, Sessions: []datadir.Session{{ID: 0x77, Timeout: 3000}}, Nodes: []datadir.Node{root, eph, zk}}
	tree, err := FromSnapshot(s, znode.Options{}, pw)
	if err != nil {
		t.Fatal(err)
	}
	if si, ok := tree.Session(0x77); !ok || string(si.Passwd) != strings.Repeat("p", 16) || si.Timeout != 3000 {
		t.Fatalf("session %+v %v", si, ok)
	}
	if got := tree.GetEphemerals(0x77, "/"); len(got) != 1 || got[0] != "/e" {
		t.Fatalf("ephemerals %v", got)
	}
	s.Sessions = nil
	if _, err := FromSnapshot(s, znode.Options{}, pw); err == nil || !strings.Contains(err.Error(), "session 0x77") {
		t.Errorf("ephemeral without its session: %v", err)
	}
	bad := datadir.Node{Path: "/a", ACL: 9}
	s = &datadir.Snapshot{Zxid: 5, Nodes: []datadir.Node{root, bad, zk}}
	if _, err := FromSnapshot(s, znode.Options{}, pw); err == nil || !strings.Contains(err.Error(), "ACL 9") {
		t.Errorf("node with an unknown ACL: %v", err)
	}
}
