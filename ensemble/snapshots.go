package ensemble

import (
	"time"

	"go.uber.org/zap"
)

// Taking a snapshot clones the tree under its lock (about a second for a
// million znodes on a small machine), and that clone is the one pause
// writes still see. tuneSnapshots keeps its cost per write constant: the
// threshold grows with the tree, to at least twice its node count, so a
// large tree is snapshotted proportionally less often (ZooKeeper's
// snapCount stays the floor).
func (n *Node) tuneSnapshots() {
	defer n.wg.Done()
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-n.done:
			return
		case <-tick.C:
		}
		t := n.RLockTree()
		nodes := uint64(t.Stats().Nodes)
		n.RUnlockTree()
		want := snapshotThreshold(n.cfg.SnapshotThreshold, nodes)
		rc := n.raft.ReloadableConfig()
		if rc.SnapshotThreshold == want {
			continue
		}
		rc.SnapshotThreshold = want
		if err := n.raft.ReloadConfig(rc); err != nil {
			n.log.Warn("cannot adjust the snapshot threshold", zap.Error(err))
		}
	}
}

// snapshotThreshold is max(snapCount, 2 x nodes), rounded up to a multiple
// of snapCount so small changes in size do not reload Raft's config.
func snapshotThreshold(snapCount, nodes uint64) uint64 {
	want := 2 * nodes
	if want <= snapCount {
		return snapCount
	}
	return (want + snapCount - 1) / snapCount * snapCount
}
