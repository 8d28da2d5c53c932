package server

import (
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/session"
	"github.com/zkraft/zkraft/znode"
)

// TestEnsembleViewSessionsLetTheLockGo: the console's sessions page (any
// login's, polled every 2 s while it is open) sorted the whole session
// table under the tree's read lock to list the first 500: at 200,000
// sessions each poll held the lock for the whole sort, and the FSM waited
// that long before its next write. The table is now copied a chunk per
// hold and the lowest ids chosen outside the lock: a write applied
// meanwhile waits for one chunk, not the listing.
func TestEnsembleViewSessionsLetTheLockGo(t *testing.T) {
	const sessions = 200_000
	tree := znode.NewTree(znode.Options{})
	zxid := int64(0)
	for i := range sessions {
		zxid++
		// Ids in no order, as the session table's map holds them.
		txn := &znode.Txn{Type: jute.OpCreateSession, Session: int64(i*7919%sessions + 1), Time: 1,
			Timeout: 600_000, Passwd: make([]byte, 16)}
		if r := tree.Apply(txn, zxid); r.Err != jute.OK {
			t.Fatal(r.Err)
		}
	}
	var mu sync.Mutex
	var waited time.Duration
	recording := false
	cfg := ensemble.Config{DataDir: t.TempDir(), TickTime: 200 * time.Millisecond,
		Metrics: backend.Metrics{ApplyWait: func(d time.Duration) {
			mu.Lock()
			if recording {
				waited = max(waited, d)
			}
			mu.Unlock()
		}}}
	if err := ensemble.Seed(cfg, tree, uint64(zxid)); err != nil {
		t.Fatal(err)
	}
	node, err := ensemble.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := session.New(session.Config{TickTime: 200 * time.Millisecond}, node)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close(); node.Close() })
	conn, ev, err := zk.Connect([]string{ln.Addr().String()}, 4*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	for e := range ev {
		if e.State == zk.StateHasSession {
			break
		}
	}

	v := &ensembleView{node: node}
	done := make(chan time.Duration)
	go func() {
		var took time.Duration
		for range 3 {
			start := time.Now()
			list, total := v.Sessions(500, 2000)
			took = max(took, time.Since(start))
			if total != sessions+1 || len(list) != 500 || list[0].ID != 1 || list[499].ID != 500 {
				t.Errorf("Sessions(500, 2000): %d of %d, from %#x to %#x", len(list), total, list[0].ID, list[len(list)-1].ID)
			}
		}
		done <- took
	}()
	mu.Lock()
	recording = true
	mu.Unlock()
	var took time.Duration
	for i := 0; ; i++ {
		select {
		case took = <-done:
		default:
			if _, err := conn.Create(fmt.Sprintf("/w%d", i), nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
				t.Fatal(err)
			}
			continue
		}
		break
	}
	mu.Lock()
	recording = false
	longest := waited
	mu.Unlock()
	t.Logf("listing the sessions took up to %v; a write waited for the tree's lock up to %v", took, longest)
	if longest > took/2 {
		t.Errorf("listing the sessions took up to %v; a write meanwhile waited for the tree's lock up to %v", took, longest)
	}
}
