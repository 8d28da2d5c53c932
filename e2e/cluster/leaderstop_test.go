//go:build unix

package cluster

import (
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/cli/fourletter"
	"github.com/zkraft/zkraft/internal/testing/procs"
)

// TestStoppedLeaderReplaced: a leader frozen (SIGSTOP) for longer than the
// election timeout is, to its followers, a leader cut off without a word:
// its connections stay open. They elect a new one once it has been silent
// for the election timeout (syncLimit ticks, 2 s here), as ZooKeeper's
// followers give up reading from their leader, and writes go on through
// them. Resumed, the old leader finds a newer term, steps down and follows
// without starting an election of its own, and every acknowledged write
// is kept.
func TestStoppedLeaderReplaced(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three server processes")
	}
	members := procs.StartEnsemble(t, 3, "syncLimit=4") // tickTime=500: 2 s
	leader := procs.LeaderOf(t, members, nil)
	admin := procs.ConnectAdmin(t, procs.ClientAddrs(members))
	if _, err := admin.Create("/load", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	admin.Close()
	var followers []*procs.Member
	for _, m := range members {
		if m != leader {
			followers = append(followers, m)
		}
	}
	_, stopLoad := procs.CreateLoad(t, procs.ClientAddrs(followers), 2)
	time.Sleep(time.Second)

	stopped := time.Now()
	if err := leader.Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	next := procs.LeaderOf(t, members, leader)
	t.Logf("member %d stopped; member %d leads after %v", leader.ID, next.ID, time.Since(stopped))
	term := procs.Terms(t, followers)
	time.Sleep(time.Until(stopped.Add(8 * time.Second))) // four election timeouts
	if err := leader.Cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}

	deadline := time.Now().Add(20 * time.Second)
	for leader.Mode() != "follower" {
		if time.Now().After(deadline) {
			t.Fatalf("the resumed leader did not step down: mode %q", leader.Mode())
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(2 * time.Second) // time for an election the resumed member might start
	acked := stopLoad()
	if now := procs.LeaderOf(t, members, nil); now != next {
		t.Fatalf("leadership moved again after the old leader resumed: member %d leads, not %d", now.ID, next.ID)
	}
	if after := procs.Terms(t, members); after[0] != term[0] || after[1] != term[0] || after[2] != term[0] {
		t.Fatalf("terms %v after the old leader resumed, want all %d: it started an election", after, term[0])
	}
	admin = procs.ConnectAdmin(t, procs.ClientAddrs(members))
	defer admin.Close()
	procs.RequirePresent(t, admin, acked)
	// The two counts are read afresh each time: a create the load had in
	// flight when it stopped may still commit after a first reading of the
	// leader's (the old leader was once seen one node "ahead" of a stale
	// reading that way).
	deadline = time.Now().Add(20 * time.Second)
	for {
		want := fourletter.Field(fourletter.Ask(next.ClientAddr, "srvr"), "Node count: ")
		got := fourletter.Field(fourletter.Ask(leader.ClientAddr, "srvr"), "Node count: ")
		if got == want && want != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the old leader did not catch up: %q nodes, the leader has %q", got, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("%d acknowledged creates kept; the old leader follows at term %d", len(acked), term[0])
}
