package cluster

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/cli/fourletter"
	"github.com/zkraft/zkraft/internal/testing/procs"
)

// quorumConf is the end of an ensemble member's conf (startEnsemble's
// zoo.cfg: initLimit 10, syncLimit 20, election ports 0).
var quorumConf = regexp.MustCompile(`\nserverId=\d\ninitLimit=10\nsyncLimit=20\nelectionAlg=3\nelectionPort=0\n` +
	`quorumPort=\d+\npeerType=0\nmembership: \n(server\.\d=127\.0\.0\.1:\d+:0:participant;127\.0\.0\.1:\d+\n){3}version=[0-9a-f]+$`)

// proposalSizes is the line a leader's srvr has after the node count, as
// ZooKeeper's; zkraft's own two lines end every member's srvr.
var proposalSizes = regexp.MustCompile(`\nNode count: \d+\nProposal sizes last/min/max: -?\d+/-?\d+/-?\d+\nLeader id: \d\nRaft term: \d+\n$`)

// mntrValue is one zk_* figure of a member's mntr ("" if absent).
func mntrValue(m *procs.Member, key string) string {
	for _, line := range strings.Split(fourletter.Ask(m.ClientAddr, "mntr"), "\n") {
		if k, v, ok := strings.Cut(line, "\t"); ok && k == "zk_"+key {
			return v
		}
	}
	return ""
}

// waitMntr waits until key reads want on m.
func waitMntr(t *testing.T, m *procs.Member, key, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for got := mntrValue(m, key); got != want; got = mntrValue(m, key) {
		if time.Now().After(deadline) {
			t.Fatalf("member %d: zk_%s = %q, want %q", m.ID, key, got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestMntrCountsLiveFollowers: the leader's zk_synced_followers and
// zk_learners count the followers that answer it, so monitoring sees a
// follower go down and come back, as with ZooKeeper's leader (which shows
// 1 of 2 with one follower killed); every member reports zk_peer_state
// and zk_quorum_size as ZooKeeper 3.8's do.
func TestMntrCountsLiveFollowers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three server processes")
	}
	members := procs.StartEnsemble(t, 3)
	leader := procs.LeaderOf(t, members, nil)
	waitMntr(t, leader, "synced_followers", "2")
	for _, m := range members {
		state := map[bool]string{true: "leading - broadcast", false: "following - broadcast"}[m == leader]
		if got := mntrValue(m, "peer_state"); got != state {
			t.Errorf("member %d: zk_peer_state %q, want %q", m.ID, got, state)
		}
		if got := mntrValue(m, "quorum_size"); got != "3" {
			t.Errorf("member %d: zk_quorum_size %q, want 3", m.ID, got)
		}
		// srvr: the leader's proposal sizes line, as ZooKeeper's.
		if got := proposalSizes.MatchString(fourletter.Ask(m.ClientAddr, "srvr")); got != (m == leader) {
			t.Errorf("member %d (leader %v): srvr has the proposal sizes line: %v", m.ID, m == leader, got)
		}
		// conf ends with QuorumZooKeeperServer's part, as ZooKeeper's.
		if conf := fourletter.Ask(m.ClientAddr, "conf"); !quorumConf.MatchString(conf) {
			t.Errorf("member %d conf lacks the quorum part:\n%s", m.ID, conf)
		}
	}
	var follower *procs.Member
	for _, m := range members {
		if m != leader {
			follower = m
			break
		}
	}
	follower.Kill()
	waitMntr(t, leader, "synced_followers", "1")
	waitMntr(t, leader, "learners", "1")
	follower.Start(t)
	waitMntr(t, leader, "synced_followers", "2")
}
