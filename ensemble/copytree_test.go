package ensemble

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// TestCopyTreeWhileApplying: CopyTree, made while writes are applied, is
// exactly the state at its last zxid (an FSM that applied the same entries
// up to there writes the same snapshot), closes its view when done, and
// falls back to a clone while another view (Raft's snapshot) is open.
func TestCopyTreeWhileApplying(t *testing.T) {
	f, ref := testFSM(t), testFSM(t)
	n := &Node{fsm: f}
	var logs []*raft.Log
	apply := func(m *fsm, txns ...*znode.Txn) {
		batch := make([]*raft.Log, len(txns))
		for i, txn := range txns {
			batch[i] = makeLog(t, uint64(len(logs)+1), 0, txn)
			logs = append(logs, batch[i])
		}
		m.ApplyBatch(batch)
	}
	apply(f, &znode.Txn{Type: jute.OpCreateSession, Session: 1, Time: 1, Timeout: 30000, Passwd: make([]byte, 16)}, createTxn(1, "/d", 0, 1))
	for d := range 10 {
		apply(f, dirTxns(d, 500)...)
	}

	type result struct {
		tree *znode.Tree
		err  error
	}
	done := make(chan result, 1)
	go func() {
		c, err := n.CopyTree()
		done <- result{c, err}
	}()
	var got result
	for i := 0; got.tree == nil && got.err == nil; i++ {
		d := fmt.Sprintf("/d/%02d", 9-i%10)
		apply(f,
			createTxn(1, fmt.Sprintf("%s/new%d", d, i), 0, 2),
			&znode.Txn{Type: jute.OpSetData, Session: 1, Time: 3, Req: jute.Marshal(&jute.SetDataRequest{Path: fmt.Sprintf("%s/%03d", d, i%500), Data: []byte("changed"), Version: -1})},
			&znode.Txn{Type: jute.OpDelete, Session: 1, Time: 3, Req: jute.Marshal(&jute.PathVersionRequest{Path: fmt.Sprintf("%s/%03d", d, (i+1)%500), Version: -1})})
		select {
		case got = <-done:
		default:
		}
	}
	if got.err != nil {
		t.Fatal(got.err)
	}
	at := got.tree.LastZxid()
	ref.ApplyBatch(logs[:at])
	var copied bytes.Buffer
	if err := got.tree.WriteSnapshot(&copied); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(copied.Bytes(), snapshotImage(t, ref)) {
		t.Fatalf("the copy is not the state at its zxid %d (%d entries applied in all)", at, len(logs))
	}

	snap, err := f.Snapshot() // the copy's view is closed: Raft gets one
	if err != nil {
		t.Fatal(err)
	}
	if snap.(*treeSnapshot).view == nil {
		t.Fatal("the view of CopyTree was left open")
	}
	c, err := n.CopyTree() // while Raft's view is open: a clone
	if err != nil {
		t.Fatal(err)
	}
	snap.Release()
	copied.Reset()
	if err := c.WriteSnapshot(&copied); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(copied.Bytes(), snapshotImage(t, f)) {
		t.Fatal("the clone made while another view was open differs from the tree")
	}
}
