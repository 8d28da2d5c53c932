package ensemble

import (
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// TestAppendTransportReportsLostStreams: a served append stream that the
// sender ends is reported with the sender's address; streams the receiver
// closes itself (its own Close) are not.
func TestAppendTransportReportsLostStreams(t *testing.T) {
	receiver, addr := newTestAppendTransport(t, nil)
	var mu sync.Mutex
	var lost []string
	report := func(leader string) {
		mu.Lock()
		lost = append(lost, leader)
		mu.Unlock()
	}
	receiver.streamLost.Store(&report)
	go func() {
		for rpc := range receiver.Consumer() {
			req := rpc.Command.(*raft.AppendEntriesRequest)
			rpc.Respond(&raft.AppendEntriesResponse{Term: req.Term, Success: true}, nil)
		}
	}()
	reported := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), lost...)
	}

	sender, _ := newTestAppendTransport(t, nil)
	if err := sender.AppendEntries("2", addr, sampleAppendRequest(0, 1), new(raft.AppendEntriesResponse)); err != nil {
		t.Fatal(err)
	}
	sender.Close() // the leader's process ends: its connections close
	deadline := time.Now().Add(5 * time.Second)
	for len(reported()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the end of the leader's stream was not reported")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := reported(); len(got) != 1 || got[0] != "127.0.0.1:1" {
		t.Fatalf("reported %q, want the sender's address once", got)
	}

	other, _ := newTestAppendTransport(t, nil)
	if err := other.AppendEntries("2", addr, sampleAppendRequest(0, 1), new(raft.AppendEntriesResponse)); err != nil {
		t.Fatal(err)
	}
	receiver.Close() // this member closing: not a lost leader
	time.Sleep(100 * time.Millisecond)
	if got := reported(); len(got) != 1 {
		t.Fatalf("reported %q after the receiver's own Close", got)
	}
}

// TestLostLeaderStreamShortensElectionTimeout: a follower told that its
// leader's stream ended lowers its heartbeat and election timeouts to half
// (Raft's leader lease, the least it accepts) and restores them after the
// window; a stream from a member that is not its leader changes nothing.
func TestLostLeaderStreamShortensElectionTimeout(t *testing.T) {
	c := newCluster(t, 3, nil) // ElectionTimeout 300 ms
	l := c.leader()
	f := c.follower()
	leaderAddr, _ := f.raft.LeaderWithID()
	if leaderAddr == "" {
		t.Fatal("follower knows no leader")
	}
	f.leaderStreamLost("127.0.0.1:1")
	if got := f.raft.ReloadableConfig().HeartbeatTimeout; got != 300*time.Millisecond {
		t.Fatalf("a stream from a non-leader changed the heartbeat timeout to %v", got)
	}
	f.leaderStreamLost(string(leaderAddr))
	rc := f.raft.ReloadableConfig()
	if rc.HeartbeatTimeout != 150*time.Millisecond || rc.ElectionTimeout != 150*time.Millisecond {
		t.Fatalf("after losing the leader's stream: heartbeat %v, election %v; want 150ms", rc.HeartbeatTimeout, rc.ElectionTimeout)
	}
	deadline := time.Now().Add(10 * time.Second)
	for f.raft.ReloadableConfig().HeartbeatTimeout != 300*time.Millisecond {
		if time.Now().After(deadline) {
			t.Fatal("the usual timeouts never came back")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !l.IsLeader() {
		t.Fatal("a live leader lost its leadership to the shortened timeout")
	}
	if got := l.raft.ReloadableConfig().HeartbeatTimeout; got != 300*time.Millisecond {
		t.Fatalf("the leader's own timeout changed to %v", got)
	}
}

// TestClusterLeaderCloseShortensFollowersWait: when the leader stops, its
// streams end and both followers lower their timeouts at once, instead of
// sitting out a whole heartbeat timeout; one of them is elected.
func TestClusterLeaderCloseShortensFollowersWait(t *testing.T) {
	c := newCluster(t, 3, func(cfg *Config) { cfg.ElectionTimeout = 2 * time.Second })
	l := c.leader()
	mustPropose(t, l, newSession(1, 60000))
	c.stop(l.ID())
	for _, n := range c.nodes {
		deadline := time.Now().Add(1500 * time.Millisecond) // before any timer at 2 s could fire
		for n.raft.ReloadableConfig().HeartbeatTimeout != time.Second {
			if time.Now().After(deadline) {
				t.Fatalf("member %d did not lower its heartbeat timeout after its leader stopped", n.ID())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	nl := c.leader()
	mustPropose(t, nl, createTxn(1, "/after", 0, 1))
}
