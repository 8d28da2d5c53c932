package ensemble

import (
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/jute"
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

// TestProbe: a member port nobody listens on refuses the dial (the
// process is gone); a listening one answers however busy its process is;
// one behind a partition is unreachable, which proves nothing.
func TestProbe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close() // never accepted: the kernel answers on its own
	gone, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone.Close()
	fn := newFaultNet()
	fn.addrs[ln.Addr().String()] = 2
	fn.partition([]int64{1}, []int64{2})
	n := &Node{cfg: Config{ElectionTimeout: time.Second, Peers: []backend.Peer{{ID: 1}, {ID: 2}}}}
	for _, c := range []struct {
		addr string
		dial Dialer
		want probeResult
	}{
		{ln.Addr().String(), defaultDialer, probeAnswered},
		{gone.Addr().String(), defaultDialer, probeRefused},
		{ln.Addr().String(), fn.dialer(1), probeUnreachable},
	} {
		n.cfg.Dial = c.dial
		if got := n.probe(c.addr); got != c.want {
			t.Errorf("probe %s: %v, want %v", c.addr, got, c.want)
		}
	}
}

// TestClusterTimeoutsArePatient: every Raft timeout of an ensemble member
// is the election timeout (syncLimit ticks), the leader lease included,
// and campaign.go's heartbeat check leaves them so.
func TestClusterTimeoutsArePatient(t *testing.T) {
	c := newCluster(t, 3, func(cfg *Config) { cfg.ElectionTimeout = 10 * time.Second })
	c.leader()
	for _, n := range c.nodes {
		rc := n.raftConfig()
		live := n.raft.ReloadableConfig()
		if rc.LeaderLeaseTimeout != 10*time.Second || live.HeartbeatTimeout != 10*time.Second || live.ElectionTimeout != 10*time.Second {
			t.Fatalf("member %d: lease %v, heartbeat %v, election %v; want 10s each", n.ID(), rc.LeaderLeaseTimeout, live.HeartbeatTimeout, live.ElectionTimeout)
		}
	}
}

// TestClusterFirstElectionWithoutTimer: a fresh ensemble whose election
// timeout is 10 s has a leader long before any of Raft's timers (10 to 20
// s) could fire; a member restarted into it changes nothing (its check
// for a leader ends in a pre-vote the others refuse).
func TestClusterFirstElectionWithoutTimer(t *testing.T) {
	start := time.Now()
	c := newCluster(t, 3, func(cfg *Config) { cfg.ElectionTimeout = 10 * time.Second })
	l := c.leader()
	if took := time.Since(start); took >= 5*time.Second {
		t.Fatalf("first leader after %v: Raft's timers elected it, not the first campaign", took)
	}
	mustPropose(t, l, newSession(1, 60000))
	term := l.Term()
	f := c.follower()
	c.stop(f.ID())
	res := mustPropose(t, l, createTxn(1, "/while-down", 0, 1))
	c.restart(f.ID())
	c.converged(res.Zxid)
	time.Sleep(time.Second) // the restarted member's heartbeat check has run
	if !l.IsLeader() || l.Term() != term {
		t.Fatalf("a member's restart disturbed the leader: leads %v, term %d -> %d", l.IsLeader(), term, l.Term())
	}
}

// TestClusterLeaderCloseElectsAtOnce: when the leader's process goes,
// its ports close and its followers elect at once, instead of sitting out
// the 10 s election timeout; five times over, the killed member rejoining
// each time (one election each: two candidates in a term would split the
// vote until Raft's timers end it, as a vote request lost on a pooled
// connection to a restarted member, or a second candidate under load,
// once did).
func TestClusterLeaderCloseElectsAtOnce(t *testing.T) {
	c := newCluster(t, 3, func(cfg *Config) { cfg.ElectionTimeout = 10 * time.Second })
	mustPropose(t, c.leader(), newSession(1, 60000))
	for round := 0; round < 5; round++ {
		l := c.leader()
		stopped := time.Now()
		c.stop(l.ID())
		for {
			res, err := c.leader().ProposeWait(createTxn(1, fmt.Sprintf("/after%d", round), 0, 1))
			if err == nil && (res.Err == jute.OK || res.Err == jute.ErrNodeExists) {
				break
			}
		}
		if took := time.Since(stopped); took >= 5*time.Second {
			t.Fatalf("round %d: next write %v after the leader stopped: Raft's timers elected, not the followers", round, took)
		}
		c.restart(l.ID())
	}
}

// TestClusterLiveLeaderStreamLoss: a stream from a live leader that ends
// (the leader closed it, a connection broke) deposes nobody: the leader's
// port still answers.
func TestClusterLiveLeaderStreamLoss(t *testing.T) {
	c := newCluster(t, 3, func(cfg *Config) { cfg.ElectionTimeout = 10 * time.Second })
	l := c.leader()
	mustPropose(t, l, newSession(1, 60000))
	term := l.Term()
	for _, n := range c.nodes {
		if n != l {
			addr, _ := n.raft.LeaderWithID()
			n.leaderStreamLost(string(addr))
		}
	}
	time.Sleep(time.Second) // probes answered; nobody elects
	mustPropose(t, l, createTxn(1, "/still", 0, 1))
	if !l.IsLeader() || l.Term() != term {
		t.Fatalf("a live leader was deposed: leads %v, term %d -> %d", l.IsLeader(), term, l.Term())
	}
}

// TestCampaignTakesOverFromABehindCandidate: while the dead leader's
// successor is sought, a vote request from a candidate told to elect at
// once whose log is behind this member's makes it elect at once (it
// refuses that candidate its vote); one from a candidate it can vote for
// makes it hold back; one from a candidate of Raft's timers (no transfer
// flag, which a member that still knows the leader refuses) neither.
func TestCampaignTakesOverFromABehindCandidate(t *testing.T) {
	c := newCluster(t, 3, func(cfg *Config) { cfg.ElectionTimeout = 10 * time.Second })
	l := c.leader()
	mustPropose(t, l, newSession(1, 60000))
	f := c.follower()
	c.converged(int64(l.raft.LastIndex()))
	var last raft.Log
	if err := f.logs.GetLog(f.raft.LastIndex(), &last); err != nil {
		t.Fatal(err)
	}
	leaderAddr, _ := f.raft.LeaderWithID()
	now := time.Now()
	for _, tc := range []struct {
		index, term uint64
		behind      bool
	}{
		{last.Index - 1, last.Term, true},
		{last.Index, last.Term - 1, true},
		{last.Index, last.Term, false},
		{last.Index + 1, last.Term, false},
	} {
		cp := &campaigner{n: f, state: campaignRecover, leader: string(leaderAddr), term: f.Term(), until: now.Add(10 * time.Second)}
		cp.voteRequested(raft.RequestVoteRequest{Term: f.Term() + 1, LastLogIndex: tc.index, LastLogTerm: tc.term, LeadershipTransfer: true}, now)
		if gotBehind := cp.behind != 0; gotBehind != tc.behind || tc.behind == !cp.hold.IsZero() {
			t.Errorf("candidate log (%d, term %d) vs ours (%d, term %d): behind %d, hold %v",
				tc.index, tc.term, last.Index, last.Term, cp.behind, cp.hold)
		}
	}
	cp := &campaigner{n: f, state: campaignRecover, leader: string(leaderAddr), term: f.Term(), until: now.Add(10 * time.Second)}
	cp.voteRequested(raft.RequestVoteRequest{Term: f.Term() + 1, LastLogIndex: last.Index - 1, LastLogTerm: last.Term}, now)
	if cp.behind != 0 || !cp.hold.IsZero() {
		t.Errorf("a request without the transfer flag: behind %d, hold %v", cp.behind, cp.hold)
	}
}

// TestClusterLeaderRemovedElectsAtOnce: a leader that removes itself from
// the ensemble (reconfig) closes its member port once its Raft stops, and
// the remaining members elect at once, not after the 10 s election
// timeout, though its process goes on.
func TestClusterLeaderRemovedElectsAtOnce(t *testing.T) {
	c := newCluster(t, 3, func(cfg *Config) { cfg.ElectionTimeout = 10 * time.Second })
	old := c.leader()
	mustPropose(t, old, newSession(1, 60000))
	start := time.Now()
	res := reconfig(t, c.follower(), &jute.ReconfigRequest{LeavingServers: fmt.Sprint(old.ID()), CurConfigID: -1}, superIDs)
	if res.Err != jute.OK {
		t.Fatalf("leader removal: %v", res.Err)
	}
	var next *Node
	for next == nil || next == old {
		next = c.leader()
		if time.Since(start) > 5*time.Second {
			t.Fatalf("no successor %v after the leader removed itself: Raft's timers, not the remaining members, elect", time.Since(start))
		}
	}
	mustPropose(t, next, createTxn(1, "/after", 0, 1))
	t.Logf("successor %d leads %v after the reconfig was asked for", next.ID(), time.Since(start))
}

// TestVoteAfterMemberRestart: a vote request to a member that restarted
// since the last one goes through, though the pooled connection it would
// take is dead: Raft counts a failed request as a vote refused and never
// asks again, and the candidate would wait out its election timeout.
func TestVoteAfterMemberRestart(t *testing.T) {
	voter := func(ln net.Listener) *appendTransport {
		m := newMux(ln, defaultDialer, nil)
		nt := raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{Stream: raftLayer{m: m}, MaxPool: votePool, Timeout: 2 * time.Second})
		tr := newAppendTransport(nt, m, nil, 2*time.Second)
		go func() {
			for rpc := range tr.Consumer() {
				rpc.Respond(&raft.RequestVoteResponse{Term: rpc.Command.(*raft.RequestVoteRequest).Term, Granted: true}, nil)
			}
		}()
		return tr
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := raft.ServerAddress(ln.Addr().String())
	first := voter(ln)
	candidate, _ := newTestAppendTransport(t, nil)
	req := &raft.RequestVoteRequest{RPCHeader: raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("1"), Addr: []byte("127.0.0.1:1")}, Term: 2}
	if err := candidate.RequestVote("2", addr, req, new(raft.RequestVoteResponse)); err != nil {
		t.Fatal(err)
	}
	first.Close() // the member stops; the candidate keeps its connection
	ln2, err := net.Listen("tcp", string(addr))
	if err != nil {
		t.Skipf("cannot listen on %s again: %v", addr, err)
	}
	second := voter(ln2)
	defer second.Close()
	req.Term = 3
	var resp raft.RequestVoteResponse
	if err := candidate.RequestVote("2", addr, req, &resp); err != nil || !resp.Granted {
		t.Fatalf("vote request to the restarted member: %v, granted %v", err, resp.Granted)
	}
}
