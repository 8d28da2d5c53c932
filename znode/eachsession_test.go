package znode

import (
	"slices"
	"sync"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

// TestEachSessionCallsOutsideTheLock: EachSession takes the tree's lock
// once per chunk, calls its function with the lock free, and hands out
// every live session once with its ephemerals, also when sessions close
// between two holds.
func TestEachSessionCallsOutsideTheLock(t *testing.T) {
	const n = 5*sessionChunk + 7
	tree := NewTree(Options{})
	zxid := int64(0)
	apply := func(txn *Txn) {
		zxid++
		txn.Time = 1
		if r := tree.Apply(txn, zxid); r.Err != jute.OK {
			t.Fatalf("%v: %v", txn.Type, r.Err)
		}
	}
	for i := range n {
		apply(&Txn{Type: jute.OpCreateSession, Session: int64(i + 1), Timeout: 30000, Passwd: make([]byte, 16)})
	}
	create := jute.CreateRequest{Path: "/e", ACL: []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}, Flags: 1}
	apply(&Txn{Type: jute.OpCreate, Session: 7, Req: jute.Marshal(&create)})

	var mu sync.RWMutex
	locked, holds, calls := false, 0, 0
	seen := map[int64]int{}
	closed := int64(n) // closed from the highest id down, one per hold
	got := EachSession(func() *Tree {
		mu.Lock() // as the FSM would, between two holds
		if holds > 0 {
			apply(&Txn{Type: jute.OpCloseSession, Session: closed})
			closed--
		}
		mu.Unlock()
		mu.RLock()
		locked = true
		holds++
		return tree
	}, func() {
		locked = false
		mu.RUnlock()
	}, func(chunk []SessionEntry) {
		calls++
		if locked {
			t.Error("called with the lock held")
		}
		for _, e := range chunk {
			seen[e.Info.ID]++
			var want []string
			if e.Info.ID == 7 {
				want = []string{"/e"}
			}
			if got := e.Ephemerals.AppendTo(nil); !slices.Equal(got, want) {
				t.Errorf("session %d's ephemerals: %v", e.Info.ID, got)
			}
		}
	})
	if holds != n/sessionChunk+1 || calls != holds {
		t.Errorf("%d sessions: %d holds, %d calls; want %d of each", n, holds, calls, n/sessionChunk+1)
	}
	if got != len(seen) {
		t.Errorf("EachSession returned %d, handed out %d sessions", got, len(seen))
	}
	for id := int64(1); id <= n; id++ {
		switch c := seen[id]; {
		case c > 1:
			t.Errorf("session %d handed out %d times", id, c)
		case c == 0 && id <= closed:
			t.Errorf("live session %d not handed out", id)
		}
	}
}
