package ensemble

import (
	"bytes"
	"fmt"
	"runtime/debug"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/zkraft/zkraft/jute"

	"github.com/zkraft/zkraft/znode"
)

func TestSnapshotThresholdGrowsWithTheTree(t *testing.T) {
	for _, c := range []struct{ snap, nodes, want uint64 }{
		{100000, 10, 100000}, {100000, 50000, 100000}, {100000, 50001, 200000}, {100000, 1000000, 2000000}, {100, 1234, 2500},
	} {
		if got := snapshotThreshold(c.snap, c.nodes); got != c.want {
			t.Errorf("snapCount %d, %d nodes: %d, want %d", c.snap, c.nodes, got, c.want)
		}
	}
}

// TestOnlyLargeSnapshotsReturnMemoryToOS: releasing a small tree's
// snapshot forces no collection (a small tree under load snapshots every
// second or two); a large one's release does, to hand back what the walk and the writes before it freed.
func TestOnlyLargeSnapshotsReturnMemoryToOS(t *testing.T) {
	if snapshotFootprint(znode.Stats{Nodes: 1000, DataSize: 100_000}) >= releaseToOSAbove {
		t.Fatal("a 1000-node tree counts as large")
	}
	if snapshotFootprint(znode.Stats{Nodes: 1_000_000, DataSize: 100_000_000}) < releaseToOSAbove {
		t.Fatal("a 1M-node tree counts as small")
	}
	gcs := func() int64 {
		var st debug.GCStats
		debug.ReadGCStats(&st)
		return st.NumGC
	}
	f := testFSM(t)
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	before := gcs()
	snap.Release()
	if n := gcs() - before; n != 0 {
		t.Fatalf("releasing an empty tree's snapshot ran %d collections", n)
	}
	before = gcs()
	(&treeSnapshot{tree: znode.NewTree(znode.Options{}), large: true}).Release()
	if gcs() == before {
		t.Fatal("releasing a large snapshot forced no collection")
	}
}

// TestSnapshotPersistsWhileApplying: a snapshot is written while Apply goes
// on (creates, data changes and deletes under the parents it is walking),
// and what it writes is the state at the index it was taken: byte for byte
// the image of an FSM that stopped there. Releasing it closes the view, so
// the next snapshot is a view again.
func TestSnapshotPersistsWhileApplying(t *testing.T) {
	f, h := testFSM(t), testFSM(t)
	index := uint64(0)
	batch := func(fsms []*fsm, txns ...*znode.Txn) {
		logs := make([]*raft.Log, len(txns))
		for i, txn := range txns {
			index++
			logs[i] = makeLog(t, index, 0, txn)
		}
		for _, m := range fsms {
			m.ApplyBatch(logs)
		}
	}
	both := []*fsm{f, h}
	batch(both, &znode.Txn{Type: jute.OpCreateSession, Session: 1, Time: 1, Timeout: 30000, Passwd: make([]byte, 16)}, createTxn(1, "/d", 0, 1))
	for d := range 20 {
		batch(both, dirTxns(d, 600)...)
	}
	want := snapshotImage(t, h)
	if n := h.tree.Stats().Nodes; n < 12_000 {
		t.Fatalf("%d nodes before the snapshot", n)
	}

	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	sink := &slowSink{}
	done := make(chan error, 1)
	go func() { done <- snap.Persist(sink) }()
	for i := 0; ; i++ {
		d := fmt.Sprintf("/d/%02d", 19-i%20) // from the end: parents the walk has not reached
		batch([]*fsm{f},
			createTxn(1, fmt.Sprintf("%s/new%d", d, i), 0, 2),
			&znode.Txn{Type: jute.OpSetData, Session: 1, Time: 3, Req: jute.Marshal(&jute.SetDataRequest{Path: fmt.Sprintf("%s/%03d", d, i%600), Data: []byte("changed"), Version: -1})},
			&znode.Txn{Type: jute.OpDelete, Session: 1, Time: 3, Req: jute.Marshal(&jute.PathVersionRequest{Path: fmt.Sprintf("%s/%03d", d, (i+1)%600), Version: -1})})
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(sink.Bytes(), want) {
				t.Fatalf("the snapshot written during %d write batches is not the state it was taken at", i+1)
			}
			if i < 3 {
				t.Fatalf("only %d write batches ran while the snapshot was written", i+1)
			}
			snap.Release()
			next, err := f.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			if ts := next.(*treeSnapshot); ts.view == nil {
				t.Fatal("the snapshot after a release is not a view")
			}
			next.Release()
			return
		default:
		}
	}
}

// dirTxns creates directory /d/<d> (two digits) and n leaves under it
// (/d/<d>/<i>, three digits), for session 1.
func dirTxns(d, n int) []*znode.Txn {
	txns := []*znode.Txn{createTxn(1, fmt.Sprintf("/d/%02d", d), 0, 1)}
	for i := range n {
		txns = append(txns, createTxn(1, fmt.Sprintf("/d/%02d/%03d", d, i), 0, 1))
	}
	return txns
}

// slowSink is a memSink whose writes take a millisecond, as a disk's may,
// so that writes are applied while a snapshot is being written.
type slowSink struct{ memSink }

func (s *slowSink) Write(p []byte) (int, error) {
	time.Sleep(time.Millisecond)
	return s.memSink.Write(p)
}
