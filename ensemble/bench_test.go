package ensemble

import (
	"sync"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// BenchmarkProposeSetData measures the write path of a lone member:
// encode, Raft append with fsync (group commit), FSM apply, completion.
// b.N writes are kept 512 in flight, like 16 sessions x 32 pipelined.
func BenchmarkProposeSetData(b *testing.B) {
	n, err := Open(Config{DataDir: b.TempDir(), TickTime: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer n.Close()
	if _, err := n.ProposeWait(&znode.Txn{Type: jute.OpCreateSession, Session: 1, Time: 1, Timeout: 60000, Passwd: make([]byte, 16)}); err != nil {
		b.Fatal(err)
	}
	if _, err := n.ProposeWait(createTxn(1, "/b", 0, 1)); err != nil {
		b.Fatal(err)
	}
	req := jute.Marshal(&jute.SetDataRequest{Path: "/b", Data: make([]byte, 100), Version: -1})
	var wg sync.WaitGroup
	sem := make(chan struct{}, 512)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sem <- struct{}{}
		wg.Add(1)
		n.Propose(&znode.Txn{Type: jute.OpSetData, Session: 1, Time: int64(i), Req: req}, releaseWaiter{&wg, sem})
	}
	wg.Wait()
}

type releaseWaiter struct {
	wg  *sync.WaitGroup
	sem chan struct{}
}

func (r releaseWaiter) Applied(*znode.Result, *znode.Tree) { <-r.sem; r.wg.Done() }
func (r releaseWaiter) Failed(error)                       { <-r.sem; r.wg.Done() }
