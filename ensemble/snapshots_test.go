package ensemble

import (
	"runtime/debug"
	"testing"

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
// second or two); a large one's release does, to hand its clone back.
func TestOnlyLargeSnapshotsReturnMemoryToOS(t *testing.T) {
	if cloneFootprint(znode.Stats{Nodes: 1000, DataSize: 100_000}) >= releaseToOSAbove {
		t.Fatal("a 1000-node tree counts as large")
	}
	if cloneFootprint(znode.Stats{Nodes: 1_000_000, DataSize: 100_000_000}) < releaseToOSAbove {
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
