package ensemble

import (
	"fmt"
	"testing"
	"time"

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
