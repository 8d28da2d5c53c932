package ensemble

import (
	"fmt"
	"testing"
	"time"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// TestCommitNudge: with Raft's commit timer effectively off, followers must
// still learn each commit at once: a write proposed through a follower
// completes there (it waits for its local apply), and a write on the
// leader reaches every follower, with nothing else written afterwards.
func TestCommitNudge(t *testing.T) {
	c := newCluster(t, 3, func(cfg *Config) { cfg.CommitTimeout = time.Hour })
	l, f := c.leader(), c.follower()

	within := func(what string, fn func()) {
		t.Helper()
		done := make(chan struct{})
		go func() { fn(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: not applied (did the follower learn the commit index?)", what)
		}
	}
	within("session through a follower", func() { mustPropose(t, f, newSession(7, 30000)) })
	for i := 0; i < 5; i++ {
		path := fmt.Sprintf("/n%d", i)
		within("create through a follower", func() {
			mustPropose(t, f, createTxn(7, path, 0, time.Now().UnixMilli()))
		})
	}
	res := mustPropose(t, l, &znode.Txn{Type: jute.OpSetData, Session: 7, Time: time.Now().UnixMilli(),
		Req: jute.Marshal(&jute.SetDataRequest{Path: "/n0", Data: []byte("y"), Version: -1})})
	within("leader write on every member", func() { c.converged(res.Zxid) })
	for _, n := range c.nodes {
		if st, err := treeStat(n, "/n0"); err != nil || st.Version != 1 {
			t.Errorf("member %d: /n0 %+v %v", n.ID(), st, err)
		}
	}
}

// TestCommitNoticeAddsNoEntry: once the leader's pipelines are open, a
// follower learns a commit from a commit notice, not from a barrier entry:
// the write through a follower completes and the log holds nothing after it.
func TestCommitNoticeAddsNoEntry(t *testing.T) {
	c := newCluster(t, 3, func(cfg *Config) { cfg.CommitTimeout = time.Hour })
	l, f := c.leader(), c.follower()
	mustPropose(t, f, newSession(7, 30000)) // opens the pipelines
	deadline := time.Now().Add(10 * time.Second)
	for l.trans.notifyCommit(0, 0) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the leader's pipelines did not open")
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // let any barrier nudge of the set-up land
	for i := 0; i < 5; i++ {
		done := make(chan *znode.Result, 1)
		go func() { done <- mustPropose(t, f, createTxn(7, fmt.Sprintf("/c%d", i), 0, time.Now().UnixMilli())) }()
		var res *znode.Result
		select {
		case res = <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("write through a follower not applied there")
		}
		time.Sleep(50 * time.Millisecond)
		if last := l.raft.LastIndex(); last != uint64(res.Zxid) {
			t.Fatalf("log ends at %d after the write at %d: a barrier nudge was appended", last, res.Zxid)
		}
	}
}

// TestCommitNoticeBeforeLeaderApply: the leader sends the commit notice
// before it applies an entry, so a follower applies it while the leader
// does. The leader's apply is held (its SessionClosed hook runs inside the
// apply) until the follower has applied the same closeSession; with the
// notice sent after the apply, as before, neither would ever finish.
func TestCommitNoticeBeforeLeaderApply(t *testing.T) {
	c := newCluster(t, 3, func(cfg *Config) { cfg.CommitTimeout = time.Hour })
	l, f := c.leader(), c.follower()
	res := mustPropose(t, l, newSession(7, 30000))
	c.converged(res.Zxid)
	hasSession := func(n *Node) bool {
		n.fsm.mu.RLock()
		defer n.fsm.mu.RUnlock()
		_, ok := n.fsm.tree.Session(7)
		return ok
	}
	seen := make(chan bool, 1)
	l.SetHooks(backend.Hooks{SessionClosed: func(int64) {
		deadline := time.Now().Add(10 * time.Second)
		for hasSession(f) && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		seen <- !hasSession(f)
	}})
	mustPropose(t, l, &znode.Txn{Type: jute.OpCloseSession, Session: 7, Time: time.Now().UnixMilli()})
	if !<-seen {
		t.Fatal("the follower did not apply the closeSession while the leader was applying it")
	}
}
