package ensemble

import (
	"bytes"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

func TestLogSizeTriggerBetweenHalfAndLimit(t *testing.T) {
	s := newLogSize(1000)
	for range 200 {
		s.reset()
		if tr := s.trigger.Load(); tr < 500 || tr >= 1000 {
			t.Fatalf("trigger %d outside [500, 1000)", tr)
		}
	}
	tr := s.trigger.Load()
	s.add([]*raft.Log{{Data: make([]byte, tr-1)}})
	select {
	case <-s.due:
		t.Fatal("due before the trigger")
	default:
	}
	s.add([]*raft.Log{{Data: []byte{1}}})
	select {
	case <-s.due:
	default:
		t.Fatal("not due at the trigger")
	}
	if off := newLogSize(0); off.trigger.Load() != 0 || off.trailing(5000) != 5000 {
		t.Fatal("a zero limit still bounds the log")
	}
}

func TestLogSizeTrailingFitsHalfTheLimit(t *testing.T) {
	s := newLogSize(1 << 20)
	if got := s.trailing(200000); got != 200000 {
		t.Fatalf("no entries seen yet: trailing %d, want snapCount's 200000", got)
	}
	for range 10 {
		s.add([]*raft.Log{{Data: make([]byte, 1024)}})
	}
	if got := s.trailing(200000); got != 512 { // 512 KiB of 1 KiB entries
		t.Fatalf("1 KiB entries: trailing %d, want 512", got)
	}
	s.reset()
	s.add([]*raft.Log{{Data: make([]byte, 100)}}) // the finished interval's average counts
	if got := s.trailing(200000); got != 512 {
		t.Fatalf("after a snapshot: trailing %d, want 512", got)
	}
	s.reset()
	if got := s.trailing(300); got != 300 {
		t.Fatalf("small entries: trailing %d, want snapCount's 300", got)
	}
	big := newLogSize(1 << 20)
	big.add([]*raft.Log{{Data: make([]byte, 1<<20)}})
	if got := big.trailing(200000); got != minTrailingEntries {
		t.Fatalf("1 MiB entries: trailing %d, want the floor %d", got, minTrailingEntries)
	}
}

// TestLogBoundedBySize: with large values, snapCount's entry count alone
// would keep every entry here (no snapshot before 100000); the size limit
// makes every member snapshot and compact its log down to the trailing
// floor, a member restarted afterwards comes back with the same data, and
// one down meanwhile catches up by the leader's snapshot.
func TestLogBoundedBySize(t *testing.T) {
	const limit, value, writes = 1 << 20, 16 << 10, 300
	var logs memberLogs
	c := newCluster(t, 3, func(cfg *Config) { cfg.SnapshotBytes = limit; logs.tweak(cfg) })
	l := c.leader()
	mustPropose(t, l, newSession(1, 300000)) // direct proposals do not touch it: it must outlive the test under load
	mustPropose(t, l, createTxn(1, "/big", 0, 1))
	data := bytes.Repeat([]byte{'v'}, value)
	var res *znode.Result
	for i := range writes {
		data[0] = byte(i)
		res = mustPropose(t, l, &znode.Txn{Type: jute.OpSetData, Session: 1, Time: int64(i),
			Req: jute.Marshal(&jute.SetDataRequest{Path: "/big", Data: data, Version: -1})})
	}
	last := l.raft.LastIndex()
	deadline := time.Now().Add(20 * time.Second)
	for _, n := range c.nodes {
		for {
			first, _ := n.logs.FirstIndex()
			snap := n.lastSnapshotIndex()
			// Every member snapshotted and compacted: what it keeps is the
			// trailing floor or what came after its snapshot, not the
			// whole log.
			if snap > 0 && first > 1 && last-first < minTrailingEntries+limit/value+8 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("member %d: log %d..%d (%d entries of %d B), snapshot at %d; want it bounded by %d B",
					n.ID(), first, last, last-first+1, value, snap, limit)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	id := c.follower().ID()
	c.stop(id)
	c.restart(id)
	c.converged(res.Zxid)
	st, err := treeStat(c.nodes[id], "/big")
	if err != nil || st.Version != writes {
		t.Fatalf("restarted member %d: /big version %d (%v), want %d", id, st.Version, err, writes)
	}
	if got := l.raft.ReloadableConfig().TrailingLogs; got != minTrailingEntries {
		t.Fatalf("trailing log %d entries of %d B, want the floor %d", got, value, minTrailingEntries)
	}

	// A follower down while the leader writes past its trailing log
	// catches up from the leader's snapshot, not its (gone) log.
	c.stop(id)
	for i := range writes {
		data[0] = byte(i)
		res = mustPropose(t, l, &znode.Txn{Type: jute.OpSetData, Session: 1, Time: int64(i),
			Req: jute.Marshal(&jute.SetDataRequest{Path: "/big", Data: data, Version: -1})})
	}
	c.restart(id)
	c.converged(res.Zxid)
	if st, err := treeStat(c.nodes[id], "/big"); err != nil || st.Version != 2*writes {
		t.Fatalf("member %d back after %d writes: /big version %d (%v), want %d", id, writes, st.Version, err, 2*writes)
	}
	if c.nodes[id].fsm.restores.Load() == 0 {
		t.Fatalf("member %d caught up without the leader's snapshot, past a trailing log of %d entries", id, minTrailingEntries)
	}
	// It logged the install once, with the snapshot's position and size.
	installed := logs.waitLines(t, id, "snapshot installed", 1)
	if f := installed[0].ContextMap(); f["index"].(uint64) == 0 || f["term"].(uint64) == 0 || f["bytes"].(int64) < writes {
		t.Fatalf("snapshot installed: %v", f)
	}
}
