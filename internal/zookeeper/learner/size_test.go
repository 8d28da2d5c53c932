package learner

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/testing/zktest"
)

// TestObserverSnapSize measures a SNAP sync of a larger tree: with
// ZKRAFT_FOLLOW_NODES=N it fills a ZooKeeper ensemble with N znodes of 100
// bytes, then times a learner from connecting to up to date and checks
// the digest of the tree it holds against the leader's next transaction.
//
//	ZKRAFT_FOLLOW_NODES=100000 go test -count=1 -run TestObserverSnapSize -v ./internal/zookeeper/learner
func TestObserverSnapSize(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("ZKRAFT_FOLLOW_NODES"))
	if n == 0 {
		t.Skip("a measurement: set ZKRAFT_FOLLOW_NODES")
	}
	e := zktest.Start(t, "-Xmx1g", "-Dzookeeper.snapshotSizeFactor=-1")
	lead := e.Leader()
	c := connect(t, lead.ClientAddr)
	data := make([]byte, 100)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 32 {
				if _, err := c.Create(fmt.Sprintf("/n%07d", i), data, 0, zk.WorldACL(zk.PermAll)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%d znodes written in %v", n, time.Since(start).Round(time.Millisecond))
	runtime.GC()
	l := New(Config{ID: int64(e.ObserverID), Servers: e.QuorumAddrs(), CheckDigests: true})
	start = time.Now()
	runLearner(t, l)
	st := caughtUp(t, e, lead, l)
	took := time.Since(start)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("SNAP sync of %d znodes: up to date in %v (last sync %s); heap in use %d MiB", n, took.Round(time.Millisecond), st.LastSync, ms.HeapInuse>>20)
	if _, err := c.Create("/last", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	st = caughtUp(t, e, lead, l)
	if st.DigestsChecked == 0 {
		t.Fatal("no digest checked")
	}
	sameTree(t, c, l)
}
