package ensemble

import "testing"

func TestSnapshotThresholdGrowsWithTheTree(t *testing.T) {
	for _, c := range []struct{ snap, nodes, want uint64 }{
		{100000, 10, 100000}, {100000, 50000, 100000}, {100000, 50001, 200000}, {100000, 1000000, 2000000}, {100, 1234, 2500},
	} {
		if got := snapshotThreshold(c.snap, c.nodes); got != c.want {
			t.Errorf("snapCount %d, %d nodes: %d, want %d", c.snap, c.nodes, got, c.want)
		}
	}
}
