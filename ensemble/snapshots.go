package ensemble

import (
	"errors"
	"strconv"
	"time"

	"github.com/hashicorp/raft"

	"go.uber.org/zap"
)

// A snapshot is written from a view of the live tree (znode.SnapshotView):
// writes wait at most for one chunk of its walk, but every snapshot still
// walks the whole tree and keeps pre-images of what changes meanwhile.
// tuneSnapshots keeps that cost per write constant: the
// threshold grows with the tree, to at least twice its node count, so a
// large tree is snapshotted proportionally less often (ZooKeeper's
// snapCount stays the floor). To keep restarts short all the same, a
// member that has been idle for a whole check interval snapshots as soon
// as snapCount entries have accumulated: the walk then competes with
// nobody, and a restart has little log to replay.
func (n *Node) tuneSnapshots() {
	defer n.wg.Done()
	tick := time.NewTicker(3 * time.Second)
	defer tick.Stop()
	lastApplied := n.raft.AppliedIndex()
	size := n.fsm.size
	for {
		select {
		case <-n.done:
			return
		case <-size.due:
			n.snapshotForSize(size)
			continue
		case <-tick.C:
		}
		n.setTrailingLogs(size.trailing(trailingLogs(n.cfg.SnapshotThreshold)))
		applied := n.raft.AppliedIndex()
		idle := applied == lastApplied
		lastApplied = applied
		if idle && applied-n.lastSnapshotIndex() >= n.cfg.SnapshotThreshold {
			if err := n.raft.Snapshot().Error(); err != nil && !errors.Is(err, raft.ErrNothingNewToSnapshot) {
				n.log.Warn("idle snapshot failed", zap.Error(err))
			}
		}
		t := n.RLockTree()
		nodes := uint64(t.Stats().Nodes)
		n.RUnlockTree()
		n.setSnapshotThreshold(snapshotThreshold(n.cfg.SnapshotThreshold, nodes))
	}
}

// snapshotForSize takes a snapshot because the log since the last one
// passed its size trigger (Config.SnapshotBytes), sizing the trailing log
// that the compaction after it keeps by the entries' average size first.
func (n *Node) snapshotForSize(size *logSize) {
	since, trigger := size.bytes.Load(), size.trigger.Load()
	if trigger <= 0 || since < trigger {
		return // a snapshot by entry count came first
	}
	n.setTrailingLogs(size.trailing(trailingLogs(n.cfg.SnapshotThreshold)))
	n.log.Info("log since the last snapshot passed its size limit; taking a snapshot",
		zap.Int64("bytes", since), zap.Int64("entries", size.entries.Load()), zap.Int64("snapSizeLimitInKb", n.cfg.SnapshotBytes>>10))
	if err := n.raft.Snapshot().Error(); err != nil && !errors.Is(err, raft.ErrNothingNewToSnapshot) {
		n.log.Warn("snapshot for the log's size failed", zap.Error(err))
	}
}

// setTrailingLogs reloads Raft's trailing log if it changed by more than
// an eighth (the average entry size moves a little all the time).
func (n *Node) setTrailingLogs(want uint64) {
	n.reloadMu.Lock()
	defer n.reloadMu.Unlock()
	rc := n.raft.ReloadableConfig()
	have := rc.TrailingLogs
	if want == have || (want > have && want-have <= have/8) || (want < have && have-want <= have/8) {
		return
	}
	rc.TrailingLogs = want
	if err := n.raft.ReloadConfig(rc); err != nil {
		n.log.Warn("cannot adjust the trailing log", zap.Error(err))
	}
}

// minTrailingLogs is hashicorp/raft's default tail of log kept behind a
// snapshot.
const minTrailingLogs = 10240

// trailingLogs is how much log a member keeps behind its latest snapshot:
// two snapCounts (at least Raft's default). A follower that falls that
// far behind while it stays in the ensemble (a pause of a second or two
// under a heavy write load: a stall, a slow disk, CPU starvation) then
// catches up from the leader's log instead of being sent a snapshot,
// which would fail the writes its clients have in flight and drop their
// connections (ZooKeeper's leader keeps sending such a follower its
// proposals). The cost is disk: about 2 x snapCount entries more in
// raft.db (~30 MB at the default 100000 and 100-byte values).
func trailingLogs(snapCount uint64) uint64 {
	return max(minTrailingLogs, 2*snapCount)
}

// setSnapshotThreshold reloads Raft's snapshot threshold if it changed.
func (n *Node) setSnapshotThreshold(want uint64) {
	n.reloadMu.Lock()
	defer n.reloadMu.Unlock()
	rc := n.raft.ReloadableConfig()
	if rc.SnapshotThreshold == want {
		return
	}
	rc.SnapshotThreshold = want
	if err := n.raft.ReloadConfig(rc); err != nil {
		n.log.Warn("cannot adjust the snapshot threshold", zap.Error(err))
	}
}

// lastSnapshotIndex is the log index of the latest snapshot (0 if none).
func (n *Node) lastSnapshotIndex() uint64 {
	v, _ := strconv.ParseUint(n.raft.Stats()["last_snapshot_index"], 10, 64)
	return v
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
