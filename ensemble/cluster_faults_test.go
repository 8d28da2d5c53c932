package ensemble

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/jute"
)

func TestClusterReplicatesAndForwards(t *testing.T) {
	c := newCluster(t, 3, nil)
	l, f := c.leader(), c.follower()
	mustPropose(t, l, newSession(1, 30000))
	res := mustPropose(t, f, createTxn(1, "/from-follower", 0, 100)) // forwarded
	if res.Zxid == 0 || f.LastZxid() < res.Zxid {
		t.Fatalf("follower replied before applying: reply zxid %d, follower at %d", res.Zxid, f.LastZxid())
	}
	c.converged(res.Zxid)
	for _, n := range c.nodes {
		st, err := treeStat(n, "/from-follower")
		if err != nil || st.Czxid != res.Zxid || st.Ctime != 100 {
			t.Fatalf("member %d: %+v %v", n.ID(), st, err)
		}
	}
}

func TestClusterBarrierCatchesUp(t *testing.T) {
	c := newCluster(t, 3, nil)
	l, f := c.leader(), c.follower()
	mustPropose(t, l, newSession(1, 30000))
	last := mustPropose(t, l, createTxn(1, "/x", 0, 1))
	w := &syncWaiter{done: make(chan struct{})}
	f.Barrier(w)
	<-w.done
	if w.err != nil || f.LastZxid() < last.Zxid {
		t.Fatalf("barrier: %v, follower at %d < %d", w.err, f.LastZxid(), last.Zxid)
	}
}

func TestClusterLeaderKillFailover(t *testing.T) {
	c := newCluster(t, 3, nil)
	l := c.leader()
	mustPropose(t, l, newSession(1, 60000))
	for i := 0; i < 20; i++ {
		mustPropose(t, l, createTxn(1, fmt.Sprintf("/k%d", i), 0, int64(i)))
	}
	killed := l.ID()
	start := time.Now()
	c.stop(killed)
	nl := c.leader()
	res := mustPropose(t, nl, createTxn(1, "/after", 0, 99))
	t.Logf("failover: new leader %d serving writes %v after the kill", nl.ID(), time.Since(start))
	for i := 0; i < 20; i++ {
		if _, err := treeStat(nl, fmt.Sprintf("/k%d", i)); err != nil {
			t.Fatalf("acknowledged /k%d lost: %v", i, err)
		}
	}
	c.restart(killed)
	c.converged(res.Zxid)
}

func TestClusterMinorityCannotWriteMajorityCarriesOn(t *testing.T) {
	// A short election timeout: the isolated member's write waits for a
	// leader for two of them before it fails.
	c := newCluster(t, 3, func(cfg *Config) { cfg.ElectionTimeout = 300 * time.Millisecond })
	l := c.leader()
	mustPropose(t, l, newSession(1, 60000))
	var minority int64
	for id := range c.nodes {
		if id != l.ID() {
			minority = id
			break
		}
	}
	var majority []int64
	for id := range c.nodes {
		if id != minority {
			majority = append(majority, id)
		}
	}
	c.net.partition([]int64{minority}, majority)

	isolated := c.nodes[minority]
	res, err := isolated.ProposeWait(createTxn(1, "/minority", 0, 1))
	if err == nil && res.Err == jute.OK {
		t.Fatal("an isolated member acknowledged a write")
	}
	var last int64
	for i := 0; i < 10; i++ {
		last = mustPropose(t, c.leader(), createTxn(1, fmt.Sprintf("/maj%d", i), 0, 1)).Zxid
	}
	c.net.heal()
	c.converged(last)
	if _, err := treeStat(isolated, "/maj9"); err != nil {
		t.Fatalf("healed member did not catch up: %v", err)
	}
	if _, err := treeStat(isolated, "/minority"); err != jute.ErrNoNode {
		t.Fatalf("unacknowledged minority write present: %v", err)
	}
}

func TestClusterCatchUpBySnapshot(t *testing.T) {
	c := newCluster(t, 3, func(cfg *Config) { cfg.SnapshotThreshold = 64 })
	l := c.leader()
	mustPropose(t, l, newSession(1, 60000))
	lagging := c.follower().ID()
	c.stop(lagging)
	var last int64
	for i := 0; i < 400; i++ {
		last = mustPropose(t, c.leader(), createTxn(1, fmt.Sprintf("/s%03d", i), 0, 1)).Zxid
	}
	// Force a snapshot so the log the lagging member needs is compacted.
	if err := c.leader().raft.Snapshot().Error(); err != nil {
		t.Fatal(err)
	}
	c.restart(lagging)
	c.converged(last)
	st, err := treeStat(c.nodes[lagging], "/s399")
	ref, _ := treeStat(c.leader(), "/s399")
	if err != nil || st != ref {
		t.Fatalf("snapshot catch-up: %+v %v, leader has %+v", st, err, ref)
	}
}

func TestClusterSessionKeptAliveThroughFollowerExpiresWithoutIt(t *testing.T) {
	c := newCluster(t, 3, nil)
	f := c.follower()
	mustPropose(t, f, newSession(7, 800))
	mustPropose(t, f, newSession(8, 800))
	for i := 0; i < 30; i++ { // 3s of touches for session 7 only, on a follower
		f.TouchSession(7)
		time.Sleep(100 * time.Millisecond)
	}
	tr := f.RLockTree()
	_, alive := tr.Session(7)
	_, idle := tr.Session(8)
	f.RUnlockTree()
	if !alive || idle {
		t.Fatalf("session 7 (touched on a follower) alive=%v; session 8 (idle) alive=%v", alive, idle)
	}
}

// TestClusterLaggingFollowerCatchesUpFromLog: a follower cut off while the
// leader commits more than Raft's default tail (10240 entries) past a
// snapshot catches up from the leader's log when it comes back, not by a
// snapshot install (which would fail its clients' writes in flight): the
// members keep two snapCounts of log behind each snapshot.
func TestClusterLaggingFollowerCatchesUpFromLog(t *testing.T) {
	const writes, snapCount = 12000, 8000
	if trailingLogs(snapCount) <= writes || minTrailingLogs >= writes {
		t.Fatalf("the test needs Raft's default tail < %d writes < the tail kept (%d)", writes, trailingLogs(snapCount))
	}
	c := newCluster(t, 3, func(cfg *Config) { cfg.SnapshotThreshold = snapCount })
	mustPropose(t, c.leader(), newSession(1, 60000))
	lagging := c.follower()
	var others []int64
	for id := range c.nodes {
		if id != lagging.ID() {
			others = append(others, id)
		}
	}
	c.net.partition([]int64{lagging.ID()}, others)
	var wg sync.WaitGroup
	var last atomic.Int64
	const workers = 16
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < writes; i += workers {
				z := mustPropose(t, c.leader(), createTxn(1, fmt.Sprintf("/lag%05d", i), 0, 1)).Zxid
				for {
					old := last.Load()
					if z <= old || last.CompareAndSwap(old, z) {
						break
					}
				}
			}
		}()
	}
	wg.Wait()
	// Snapshot and compact now, while the follower is still behind.
	if err := c.leader().raft.Snapshot().Error(); err != nil {
		t.Fatal(err)
	}
	c.net.heal()
	c.converged(last.Load())
	if n := lagging.fsm.restores.Load(); n != 0 {
		t.Fatalf("the lagging follower was sent a snapshot (%d restores) instead of the log", n)
	}
	if _, err := treeStat(lagging, fmt.Sprintf("/lag%05d", writes-1)); err != nil {
		t.Fatal(err)
	}
}

// TestClusterHandOff: the leader hands off to a follower, which leads at
// once; the old leader follows and writes go on through it.
func TestClusterHandOff(t *testing.T) {
	c := newCluster(t, 3, nil)
	old := c.leader()
	mustPropose(t, old, newSession(1, 60000))
	if err := old.HandOff(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if old.IsLeader() {
		t.Fatal("still the leader after the hand-off")
	}
	next := c.leader()
	if next == old {
		t.Fatal("no other member leads")
	}
	res := mustPropose(t, old, createTxn(1, "/after-hand-off", 0, 1))
	c.converged(res.Zxid)
	if err := next.HandOff(5 * time.Second); err != nil || next.IsLeader() {
		t.Fatalf("second hand-off: %v, still leader %v", err, next.IsLeader())
	}
	if err := c.follower().HandOff(time.Second); err != nil {
		t.Fatalf("a follower's hand-off must be a no-op: %v", err)
	}
}

// TestSnapshotInstallDropsTheClients: a follower cut off until the log it
// needs is compacted catches up by the leader's snapshot, which replaces
// its tree without watch events; it tells the session layer (the
// TreeReplaced hook), which closes its clients' connections so their
// SetWatches fire what they missed, as a ZooKeeper follower's resync
// does; it runs before any client can read the new tree. Its own
// restart's restore of a local snapshot is not such a replacement: no
// hooks are set yet then.
func TestSnapshotInstallDropsTheClients(t *testing.T) {
	c := newCluster(t, 3, func(cfg *Config) { cfg.SnapshotThreshold = 64 })
	mustPropose(t, c.leader(), newSession(1, 60000))
	lagging := c.follower()
	replaced := make(chan bool, 4)
	lagging.SetHooks(backend.Hooks{TreeReplaced: func() {
		// Before any read of the new tree: the tree's lock is held.
		readable := lagging.fsm.mu.TryRLock()
		if readable {
			lagging.fsm.mu.RUnlock()
		}
		replaced <- readable
	}})
	var others []int64
	for id := range c.nodes {
		if id != lagging.ID() {
			others = append(others, id)
		}
	}
	c.net.partition([]int64{lagging.ID()}, others)
	var last int64
	for i := 0; i < 200; i++ {
		last = mustPropose(t, c.leader(), createTxn(1, fmt.Sprintf("/r%03d", i), 0, 1)).Zxid
	}
	compactAll(t, c.leader()) // the log the lagging member needs is compacted away
	c.net.heal()
	c.converged(last)
	select {
	case readable := <-replaced:
		if readable {
			t.Error("TreeReplaced ran while clients could read the new tree")
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("no TreeReplaced after %d restores", lagging.fsm.restores.Load())
	}
}

// compactAll snapshots l keeping no log behind the snapshot: a member
// that needs an entry before it catches up by the snapshot.
func compactAll(t *testing.T, l *Node) {
	t.Helper()
	rc := l.raft.ReloadableConfig()
	rc.TrailingLogs = 0
	if err := l.raft.ReloadConfig(rc); err != nil {
		t.Fatal(err)
	}
	if err := l.Snapshot(); err != nil {
		t.Fatal(err)
	}
}
