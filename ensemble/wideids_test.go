package ensemble

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/internal/testing/testport"
	"github.com/zkraft/zkraft/jute"
)

// TestMembersWithWideIDs: members 300, 44 (the same low byte) and -5, ids
// ZooKeeper takes, form an ensemble: one leads (its id read back from
// Raft), writes commit from every member, /zookeeper/config lists them,
// and a session moving to member 300 is told to the others through the
// wide session owner entry.
func TestMembersWithWideIDs(t *testing.T) {
	c := newClusterOf(t, []int64{300, 44, -5}, 3, nil)
	l := c.leader()
	id, _, ok := l.Leader()
	if !ok || id != l.ID() || !slices.Contains([]int64{300, 44, -5}, id) {
		t.Fatalf("leader id %d (%v); the leader is member %d", id, ok, l.ID())
	}
	for _, n := range c.nodes {
		if got, _, ok := n.Leader(); !ok || got != id {
			t.Errorf("member %d knows leader %d (%v), want %d", n.ID(), got, ok, id)
		}
	}
	var last int64
	for i, n := range []*Node{c.nodes[300], c.nodes[44], c.nodes[-5]} {
		last = mustPropose(t, n, newSession(int64(1000+i), 30000)).Zxid
	}
	c.converged(last)
	deadline := time.Now().Add(10 * time.Second)
	want := "server.-5=" // listed by numeric id, -5 first
	for !strings.HasPrefix(configText(c.leader()), want) || !strings.Contains(configText(c.leader()), "server.300=") {
		if time.Now().After(deadline) {
			t.Fatalf("/zookeeper/config:\n%s", configText(c.leader()))
		}
		time.Sleep(10 * time.Millisecond)
	}

	moved := make(chan int64, 1)
	c.nodes[44].SetHooks(backend.Hooks{SessionMoved: func(session, member int64) {
		if session == 1000 {
			moved <- member
		}
	}})
	c.nodes[300].AnnounceSession(1000, nil)
	select {
	case m := <-moved:
		if m != 300 {
			t.Fatalf("session 1000 moved to member %d, want 300", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("member 44 was not told that session 1000 moved")
	}
}

// TestReconfigWideObserver: as kazoo's TestReconfig, a reconfig joining
// observer server.999 without WRITE on /zookeeper/config is NoAuth (not
// BadArguments: 999 is an id), and a super user adds observer 300 and
// removes it again, as ZooKeeper lets it.
func TestReconfigWideObserver(t *testing.T) {
	c := newCluster(t, 3, nil)
	c.leader()
	f := c.follower()
	joining := "server.999=0.0.0.0:1234:2345:observer;3456"
	if res := reconfig(t, f, &jute.ReconfigRequest{JoiningServers: joining, CurConfigID: -1}, nil); res.Err != jute.ErrNoAuth {
		t.Fatalf("joining server.999 without WRITE: %v, want NoAuth", res.Err)
	}
	port, err := testport.Addr() // nothing listens there: the observer never comes
	if err != nil {
		t.Fatal(err)
	}
	obs := backend.Peer{ID: 300, Addr: port, ElectionPort: 2345, Observer: true, ClientAddr: "0.0.0.0:3456"}
	res := reconfig(t, f, &jute.ReconfigRequest{JoiningServers: obs.ConfigLine(), CurConfigID: -1}, superIDs)
	if res.Err != jute.OK {
		t.Fatalf("super joining server.300: %v", res.Err)
	}
	cfg := string(res.Resp.(*jute.GetDataResponse).Data)
	if !strings.Contains(cfg, obs.ConfigLine()+"\n") {
		t.Fatalf("config after adding 300:\n%s", cfg)
	}
	members, _ := c.leader().Membership()
	if !slices.ContainsFunc(members, func(p backend.Peer) bool { return p.ID == 300 && p.Observer }) {
		t.Fatalf("membership after adding 300: %+v", members)
	}
	res = reconfig(t, c.follower(), &jute.ReconfigRequest{LeavingServers: "300", CurConfigID: -1}, superIDs)
	if res.Err != jute.OK {
		t.Fatalf("super removing 300: %v", res.Err)
	}
	if cfg := string(res.Resp.(*jute.GetDataResponse).Data); strings.Contains(cfg, "server.300=") || strings.Count(cfg, "server.") != 3 {
		t.Fatalf("config after removing 300:\n%s", cfg)
	}
	if ids := raftServerIDs(c.leader()); fmt.Sprint(ids) != "[1 2 3]" {
		t.Fatalf("raft configuration after removing 300: %v", ids)
	}
}

// raftServerIDs are the member ids in n's Raft configuration, sorted.
func raftServerIDs(n *Node) []int64 {
	f := n.raft.GetConfiguration()
	if f.Error() != nil {
		return nil
	}
	var ids []int64
	for _, s := range f.Configuration().Servers {
		id, _ := memberID(s.ID)
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
