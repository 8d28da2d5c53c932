package ensemble

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// TestReaperLetsTheTreeLockGo: the reaper looked at every container and
// TTL node, and sorted the ones due, under one hold of the tree's read
// lock, which the FSM then waited for (and every read behind it); the
// clients decide how many there are. It now holds the lock for at most
// reapScanChunk of them at a time, and finds every one due all the same.
func TestReaperLetsTheTreeLockGo(t *testing.T) {
	tree := znode.NewTree(znode.Options{ExtendedTypes: true})
	zxid := int64(0)
	apply := func(txn *znode.Txn) {
		zxid++
		if r := tree.Apply(txn, zxid); r.Err != jute.OK {
			t.Fatalf("%v: %v", txn.Type, r.Err)
		}
	}
	apply(&znode.Txn{Type: jute.OpCreateSession, Session: 7, Time: 1000, Timeout: 30000, Passwd: make([]byte, 16)})
	const nodes = 3*reapScanChunk + 5
	for i := range nodes {
		apply(&znode.Txn{Type: jute.OpCreateTTL, Session: 7, Time: 1000, Req: jute.Marshal(&jute.CreateRequest{
			Path: fmt.Sprintf("/ttl-%05d", i), ACL: open, Flags: 5, TTL: 100, HasTTL: true})})
	}
	apply(&znode.Txn{Type: jute.OpCreateTTL, Session: 7, Time: 1000, Req: jute.Marshal(&jute.CreateRequest{
		Path: "/later", ACL: open, Flags: 5, TTL: 1 << 30, HasTTL: true})})

	var mu sync.RWMutex
	holds := 0
	lock := func() *znode.Tree {
		mu.RLock()
		holds++
		return tree
	}
	got := reapCandidates(5000, 2*nodes, lock, mu.RUnlock)
	if holds < nodes/reapScanChunk+1 {
		t.Errorf("the reaper examined %d TTL nodes in %d holds of the tree's lock, want at most %d a hold", nodes+1, holds, reapScanChunk)
	}
	want := tree.ReapCandidates(5000)
	if len(want) != nodes || !slices.Equal(got, want) {
		t.Errorf("the reaper found %d nodes due (%v...), want the %d expired ones", len(got), got[:min(3, len(got))], nodes)
	}

	// A round deletes at most its limit: the first it finds, sorted.
	holds = 0
	got = reapCandidates(5000, 10, lock, mu.RUnlock)
	if len(got) != 10 || !slices.IsSorted(got) || holds != 1 {
		t.Errorf("with a limit of 10: %v in %d holds", got, holds)
	}
	for _, p := range got {
		if _, found := slices.BinarySearch(want, p); !found {
			t.Errorf("%s is not due", p)
		}
	}
}
