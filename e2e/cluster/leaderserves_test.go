package cluster

import (
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/cli/fourletter"
	"github.com/zkraft/zkraft/internal/testing/procs"
)

// TestLeaderServesNo: with leaderServes=no in zoo.cfg the leader of a
// three-process ensemble turns clients away (they go to the followers),
// still answers four-letter words, and a member that becomes leader after
// a kill -9 drops its clients, whose sessions live on at the other member.
func TestLeaderServesNo(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three server processes")
	}
	members := procs.StartEnsemble(t, 3, "leaderServes=no")
	leader := -1
	for i, m := range members {
		if m.Mode() == "leader" {
			leader = i
		}
	}
	if leader < 0 {
		t.Fatal("no leader")
	}

	// Only the leader's address: no session.
	only, _, err := zk.Connect([]string{members[leader].ClientAddr}, 5*time.Second, zk.WithLogger(procs.QuietLogger{}))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if only.State() == zk.StateHasSession {
		t.Error("the leader served a client with leaderServes=no")
	}
	only.Close()

	// Every address: sessions on the followers, which keep working after
	// the leader dies and one of them takes over.
	var all []string
	for _, m := range members {
		all = append(all, m.ClientAddr)
	}
	var clients []*zk.Conn
	for i := 0; i < 4; i++ {
		c, _, err := zk.Connect(all, 10*time.Second, zk.WithLogger(procs.QuietLogger{}))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		clients = append(clients, c)
		if _, err := c.Create("/c"+string(rune('0'+i)), nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
	}
	members[leader].Kill()
	deadline := time.Now().Add(20 * time.Second)
	for {
		newLeader := -1
		for i, m := range members {
			if i != leader && m.Mode() == "leader" {
				newLeader = i
			}
		}
		if newLeader >= 0 && fourletter.Field(fourletter.Ask(members[newLeader].ClientAddr, "srvr"), "Connections: ") == "1" {
			break // only the srvr connection itself
		}
		if time.Now().After(deadline) {
			t.Fatal("the new leader kept its clients")
		}
		time.Sleep(100 * time.Millisecond)
	}
	for i, c := range clients {
		if _, err := c.Set("/c"+string(rune('0'+i)), []byte("after"), -1); err != nil {
			t.Errorf("client %d after the failover: %v", i, err)
		}
	}
	if out := fourletter.Ask(members[(leader+1)%3].ClientAddr, "ruok"); !strings.Contains(out, "imok") {
		t.Errorf("ruok: %q", out)
	}
}
