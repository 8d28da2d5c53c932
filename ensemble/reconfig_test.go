package ensemble

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/internal/testing/testport"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

var superIDs = []jute.Id{{Scheme: "super"}}

func configText(n *Node) string {
	t := n.RLockTree()
	defer n.RUnlockTree()
	data, _, _ := t.GetData(znode.ConfigPath, superIDs)
	return string(data)
}

func reconfig(t *testing.T, n *Node, req *jute.ReconfigRequest, ids []jute.Id) *znode.Result {
	t.Helper()
	w := &syncWaiter{done: make(chan struct{})}
	n.Reconfig(req, ids, w)
	select {
	case <-w.done:
	case <-time.After(60 * time.Second):
		t.Fatal("reconfig did not complete")
	}
	if w.err != nil {
		t.Fatal(w.err)
	}
	return w.res
}

func TestReconfigAddAndRemoveMembers(t *testing.T) {
	var logs memberLogs
	c := newCluster(t, 3, logs.tweak)
	l := c.leader()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(configText(l), "version=") {
		if time.Now().After(deadline) {
			t.Fatal("initial /zookeeper/config never written")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := strings.Count(configText(l), "server."); got != 3 {
		t.Fatalf("initial config:\n%s", configText(l))
	}
	// As ZooKeeper serves its static membership: version 0, mzxid 0, on
	// every member.
	for _, n := range c.nodes {
		if n == nil {
			continue
		}
		tr := n.RLockTree()
		data, st, err := tr.GetData(znode.ConfigPath, superIDs)
		n.RUnlockTree()
		if err == nil && len(data) > 0 && (!strings.HasSuffix(string(data), "\nversion=0") || st.Mzxid != 0 || st.Version != -1) {
			t.Fatalf("initial config on member %d: %q, mzxid %#x, version %d", n.cfg.ID, data, st.Mzxid, st.Version)
		}
	}
	if _, v := l.Membership(); v != 0 {
		t.Fatalf("initial membership version %d, want 0", v)
	}

	// Without WRITE on /zookeeper/config (world:anyone:r) a reconfig is refused.
	f := c.follower()
	if res := reconfig(t, f, &jute.ReconfigRequest{LeavingServers: "3", CurConfigID: -1}, nil); res.Err != jute.ErrNoAuth {
		t.Fatalf("unauthorized reconfig: %v", res.Err)
	}
	// A stale version is refused.
	if res := reconfig(t, f, &jute.ReconfigRequest{LeavingServers: "3", CurConfigID: 12345}, superIDs); res.Err != jute.ErrBadVersion {
		t.Fatalf("stale reconfig: %v", res.Err)
	}

	// Add an empty fourth member: it joins by snapshot/log from the leader.
	addr, err := testport.Addr()
	if err != nil {
		t.Fatal(err)
	}
	c.net.addrs[addr] = 4
	c.dirs[4] = t.TempDir()
	newPeer := backend.Peer{ID: 4, Addr: addr, ClientAddr: "127.0.0.1:0"}
	opened := make(chan *Node, 1)
	go func() {
		n, err := Open(Config{ID: 4, DataDir: c.dirs[4], TickTime: 200 * time.Millisecond, ElectionTimeout: 300 * time.Millisecond,
			Peers: append(append([]backend.Peer(nil), c.peers...), newPeer), Dial: c.net.dialer(4), Join: true})
		if err != nil {
			t.Error(err)
		}
		opened <- n
	}()
	res := reconfig(t, f, &jute.ReconfigRequest{JoiningServers: strings.TrimPrefix(newPeer.ConfigLine(), ""), CurConfigID: -1}, superIDs)
	if res.Err != jute.OK {
		t.Fatalf("add: %v", res.Err)
	}
	cfg := string(res.Resp.(*jute.GetDataResponse).Data)
	if !strings.Contains(cfg, "server.4=") || strings.Count(cfg, "server.") != 4 {
		t.Fatalf("config after add:\n%s", cfg)
	}
	n4 := <-opened
	if n4 == nil {
		t.FailNow()
	}
	c.nodes[4] = n4
	c.converged(res.Zxid)
	// The leader that ran it logs the change once; the others do not.
	changed := logs.waitLines(t, l.ID(), "membership changed", 1)
	if f := changed[0].ContextMap(); fmt.Sprint(f["added"]) != "[4]" || fmt.Sprint(f["removed"]) != "[]" || f["voters"] != int64(4) {
		t.Fatalf("membership changed: %v", f)
	}
	for id := range logs.logs {
		if id != l.ID() && len(logs.lines(id, "membership changed")) != 0 {
			t.Fatalf("member %d logged a change it did not make", id)
		}
	}

	// Remove member 3 (by version, as zkCli reconfig -v does).
	_, version, _ := backend.ParseMembers(cfg)
	rl := c.leader()
	res = reconfig(t, rl, &jute.ReconfigRequest{LeavingServers: "3", CurConfigID: version}, superIDs)
	if res.Err != jute.OK {
		t.Fatalf("remove: %v", res.Err)
	}
	cfg = string(res.Resp.(*jute.GetDataResponse).Data)
	if strings.Contains(cfg, "server.3=") || strings.Count(cfg, "server.") != 3 {
		t.Fatalf("config after remove:\n%s", cfg)
	}
	want := 1 // the leader's lines: this change, and the addition if it made it
	if rl == l {
		want = 2
	}
	got := logs.waitLines(t, rl.ID(), "membership changed", want)
	if f := got[want-1].ContextMap(); fmt.Sprint(f["added"]) != "[]" || fmt.Sprint(f["removed"]) != "[3]" || f["voters"] != int64(3) {
		t.Fatalf("membership changed: %v", f)
	}
	c.stop(3)
	mustPropose(t, c.leader(), newSession(99, 30000)) // the new majority (1, 2, 4) commits

	// The leader itself leaves: the new configuration is still recorded and
	// a successor leads.
	old := c.leader()
	res = reconfig(t, c.follower(), &jute.ReconfigRequest{LeavingServers: fmt.Sprint(old.ID()), CurConfigID: -1}, superIDs)
	if res.Err != jute.OK || strings.Contains(string(res.Resp.(*jute.GetDataResponse).Data), fmt.Sprintf("server.%d=", old.ID())) {
		t.Fatalf("leader removal: %v", res.Err)
	}
	c.stop(old.ID())
	mustPropose(t, c.leader(), newSession(100, 30000))
}

// TestReconfigErrorOrder: as ZooKeeper's PrepRequestProcessor, a reconfig
// is checked for its version and its arguments before the caller's WRITE
// permission on /zookeeper/config (world:anyone:r here), so a caller
// without it sees BadVersion, BadArguments or MarshallingError (a server
// id that is not a long) first, and NoAuth only for a request that would
// otherwise go ahead.
func TestReconfigErrorOrder(t *testing.T) {
	c := newCluster(t, 3, nil)
	c.leader()
	for _, n := range []*Node{c.follower(), c.leader()} {
		for _, tc := range []struct {
			req  jute.ReconfigRequest
			want jute.ErrCode
		}{
			{jute.ReconfigRequest{LeavingServers: "3", CurConfigID: 12345}, jute.ErrBadVersion},
			{jute.ReconfigRequest{JoiningServers: "server.9=no-ports", CurConfigID: -1}, jute.ErrBadArguments},
			// Not a long: ZooKeeper's NumberFormatException, MarshallingError.
			{jute.ReconfigRequest{JoiningServers: "server.x=h:1:2:observer;3", CurConfigID: -1}, jute.ErrMarshallingError},
			{jute.ReconfigRequest{JoiningServers: "server.99999999999999999999=h:1:2:observer;3", CurConfigID: -1}, jute.ErrMarshallingError},
			{jute.ReconfigRequest{LeavingServers: "x", CurConfigID: -1}, jute.ErrMarshallingError},
			// An id ZooKeeper takes: only the permission is missing.
			{jute.ReconfigRequest{JoiningServers: "server.999=0.0.0.0:1234:2345:observer;3456", CurConfigID: -1}, jute.ErrNoAuth},
			{jute.ReconfigRequest{LeavingServers: "1,2,3", CurConfigID: -1}, jute.ErrBadArguments},
			{jute.ReconfigRequest{LeavingServers: "3", CurConfigID: -1}, jute.ErrNoAuth},
		} {
			if res := reconfig(t, n, &tc.req, nil); res.Err != tc.want {
				t.Errorf("member %d, %+v without WRITE: %v, want %v", n.ID(), tc.req, res.Err, tc.want)
			}
		}
	}
	if got := strings.Count(configText(c.leader()), "server."); got != 3 {
		t.Fatalf("refused reconfigs changed the membership:\n%s", configText(c.leader()))
	}
}

// TestReconfigAfterRemovingLeader: the leader's removal is complete once
// its configuration commits, as in ZooKeeper. A reconfig sent right after
// (here adding a new member, from a follower) succeeds or, while the
// departing leader steps out and a successor is elected, fails as a closed
// connection would; it is never ReconfigInProgress.
func TestReconfigAfterRemovingLeader(t *testing.T) {
	c := newCluster(t, 3, func(cfg *Config) { cfg.ElectionTimeout = 300 * time.Millisecond })
	// try sends req from n until it is answered; a failed call (the
	// client's connection would close) is sent again, as a client would
	// after reconnecting, from a member still serving.
	try := func(round int, what string, req *jute.ReconfigRequest) *znode.Result {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			n := c.follower()
			w := &syncWaiter{done: make(chan struct{})}
			n.Reconfig(req, superIDs, w)
			select {
			case <-w.done:
			case <-time.After(60 * time.Second):
				t.Fatalf("round %d: %s did not complete", round, what)
			}
			if w.err == nil {
				return w.res
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: %s: %v", round, what, w.err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	for round := 0; round < 5; round++ {
		old := c.leader()
		members, _ := old.Membership()
		addr, err := testport.Addr()
		if err != nil {
			t.Fatal(err)
		}
		id := int64(4 + round)
		c.net.addrs[addr] = id
		c.dirs[id] = t.TempDir()
		joiner := backend.Peer{ID: id, Addr: addr, ClientAddr: "127.0.0.1:0"}
		opened := make(chan *Node, 1)
		go func() {
			n, err := Open(Config{ID: id, DataDir: c.dirs[id], TickTime: 200 * time.Millisecond, ElectionTimeout: 300 * time.Millisecond,
				Peers: append(members, joiner), Dial: c.net.dialer(id), Join: true})
			if err != nil {
				t.Error(err)
			}
			opened <- n
		}()

		res := try(round, "removing the leader", &jute.ReconfigRequest{LeavingServers: fmt.Sprint(old.ID()), CurConfigID: -1})
		if res.Err != jute.OK {
			t.Fatalf("round %d: removing leader %d: %v", round, old.ID(), res.Err)
		}
		res = try(round, "adding a member", &jute.ReconfigRequest{JoiningServers: joiner.ConfigLine(), CurConfigID: -1})
		if res.Err != jute.OK {
			t.Fatalf("round %d: adding %d right after removing leader %d: %v", round, id, old.ID(), res.Err)
		}
		n := <-opened
		if n == nil {
			t.FailNow()
		}
		c.nodes[id] = n
		c.stop(old.ID())
		mustPropose(t, c.leader(), newSession(int64(100+round), 30000))
	}
}

// TestReconfigForwardedByTheNewLeaderRunsThere: a member that was a
// follower when a reconfig arrived and became the leader while its
// forwarder waited for one (the old leader gone) runs the reconfig itself
// instead of failing it with "this member is the leader". Here the leader
// forwards one directly, the state that race leaves.
func TestReconfigForwardedByTheNewLeaderRunsThere(t *testing.T) {
	c := newCluster(t, 3, nil)
	l := c.leader()
	call, w := staleReconfig(t, l)
	l.forwardReconfig(call, 1)
	wantLeadersBadVersion(t, w)
}

// staleReconfig is a super user's reconfig of a stale version, awaited on n.
func staleReconfig(t *testing.T, n *Node) (reconfigCall, *syncWaiter) {
	t.Helper()
	call := reconfigCall{Time: time.Now().UnixMilli(), Ids: superIDs, Req: jute.ReconfigRequest{LeavingServers: "3", CurConfigID: 12345}}
	call.Origin = n.runID | uint64(n.seq.Add(1))
	w := &syncWaiter{done: make(chan struct{})}
	if !n.waiters.put(call.Origin, w) {
		t.Fatal("waiters closed")
	}
	return call, w
}

// wantLeadersBadVersion waits for staleReconfig's answer: the leader's
// BadVersion, not a drop.
func wantLeadersBadVersion(t *testing.T, w *syncWaiter) {
	t.Helper()
	select {
	case <-w.done:
	case <-time.After(30 * time.Second):
		t.Fatal("reconfig did not complete")
	}
	if w.err != nil {
		t.Fatalf("dropped: %v", w.err)
	}
	if w.res.Err != jute.ErrBadVersion {
		t.Fatalf("result %v, want the leader's answer to the stale version (BadVersion)", w.res.Err)
	}
}

// TestReconfigForwardedToAFormerLeaderIsSentAgain: a reconfig forwarded to
// a member that had lost its leadership before taking it (answered "not
// leader": it did not run it) is sent again, to the leader then known,
// instead of failing.
func TestReconfigForwardedToAFormerLeaderIsSentAgain(t *testing.T) {
	c := newCluster(t, 3, nil)
	c.leader()
	f := c.follower()
	call, w := staleReconfig(t, f)
	// The answer of a former leader to the first forward.
	f.reconfigForwarded(call, 1)(statusNotLeader, []byte(reconfigNotLeader), nil)
	wantLeadersBadVersion(t, w)
}

// TestReconfigForwardedFailsWhenLeaderLost: a leader accepts a forwarded
// reconfig at once and proposes its outcome later. If it dies in between,
// the follower's waiter must fail as a forwarded write's does when its
// connection breaks (errForwardBroken: unknown outcome, the client's
// connection closes, as a ZooKeeper follower's clients' do when it loses
// its leader), not wait forever. Here the leader's links to the followers
// carry nothing (frozen), so the stale version's BadVersion it proposes
// cannot commit, and it is stopped once it accepted the reconfig.
func TestReconfigForwardedFailsWhenLeaderLost(t *testing.T) {
	c := newCluster(t, 3, func(cfg *Config) { cfg.ElectionTimeout = 5 * time.Second })
	l := c.leader()
	f := c.follower()
	mustPropose(t, f, newSession(1, 30000)) // f's forwarding connection is up
	// Only the connections the leader dialed (its append streams); the
	// follower's forwarding connection to it still carries the reconfig.
	c.net.mu.Lock()
	for id := range c.nodes {
		if id != l.ID() {
			c.net.frozen[[2]int64{l.ID(), id}] = true
		}
	}
	c.net.mu.Unlock()

	w := &syncWaiter{done: make(chan struct{})}
	f.Reconfig(&jute.ReconfigRequest{LeavingServers: "3", CurConfigID: 12345}, superIDs, w)
	deadline := time.Now().Add(10 * time.Second)
	for {
		f.fwd.mu.Lock()
		answered := len(f.fwd.inflight) == 0
		f.fwd.mu.Unlock()
		if answered {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the leader did not answer the forwarded reconfig")
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case <-w.done:
		t.Fatalf("answered before the leader stopped: %v %v", w.res, w.err)
	default:
	}
	c.stop(l.ID())
	select {
	case <-w.done:
	case <-time.After(10 * time.Second):
		t.Fatal("forwarded reconfig still waiting after its leader stopped")
	}
	if !errors.Is(w.err, errForwardBroken) {
		t.Fatalf("got %v, %v; want a failure wrapping errForwardBroken", w.res, w.err)
	}
	c.net.heal()
}

// TestReconfigForwardedAnsweredOnce: forwarded reconfigs answered through
// the log complete their waiters once (a syncWaiter completed twice
// panics), leave at most one origin noted as accepted on the forwarder,
// and a later break of the forwarding connection fails none of them.
func TestReconfigForwardedAnsweredOnce(t *testing.T) {
	c := newCluster(t, 3, nil)
	c.leader()
	f := c.follower()
	for i := 0; i < 5; i++ {
		if res := reconfig(t, f, &jute.ReconfigRequest{LeavingServers: "3", CurConfigID: 12345}, superIDs); res.Err != jute.ErrBadVersion {
			t.Fatalf("reconfig %d: %v, want BadVersion", i, res.Err)
		}
	}
	f.fwd.mu.Lock()
	accepted := len(f.fwd.accepted)
	f.fwd.mu.Unlock()
	if accepted > 1 {
		t.Fatalf("%d origins noted as accepted, want at most the last one", accepted)
	}
	f.fwd.leaderIs("") // breaks the connection
	f.fwd.mu.Lock()
	accepted = len(f.fwd.accepted) + len(f.fwd.outcomes)
	f.fwd.mu.Unlock()
	if accepted != 0 {
		t.Fatalf("%d origins kept after the connection broke", accepted)
	}
}
