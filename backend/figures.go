package backend

import "time"

// Metrics receives the durations a member measures, for a metrics
// registry (ensemble.Config.Metrics). Any field may be nil. Each is called on the
// goroutine that measured, some on the write path: it must not block.
type Metrics struct {
	// Append is a leader's AppendEntries round trip to a follower for a
	// request that carried entries (the follower's disk write included;
	// heartbeats and commit notices are not counted).
	Append func(time.Duration)
	// Fsync is one sync of this member's log (the journal's write and
	// fdatasync of a batch, as mntr's fsynctime).
	Fsync func(time.Duration)
	// Snapshot is a snapshot written (SnapshotTaken), a leader's snapshot
	// loaded (SnapshotInstalled) or the member's own loaded at start
	// (SnapshotRestored).
	Snapshot func(kind SnapshotKind, took time.Duration)
	// Election is how long this member knew no leader before it learned of
	// the new one (ZooKeeper's election_time); an election it learned of
	// without missing a leader is not counted.
	Election func(time.Duration)
	// ApplyWait is how long the FSM waited for the tree's write lock
	// before applying a batch: the time readers inside held it. Every read
	// holds it for a bounded time (docs/DESIGN.md), and readers arriving
	// once the FSM waits queue behind it.
	ApplyWait func(time.Duration)
}

// SnapshotKind says which snapshot a Metrics.Snapshot duration is of.
type SnapshotKind int

// The snapshot kinds.
const (
	SnapshotTaken SnapshotKind = iota + 1
	SnapshotInstalled
	SnapshotRestored
)

// String is the kind as a metric label: taken, installed, restored.
func (k SnapshotKind) String() string {
	switch k {
	case SnapshotTaken:
		return "taken"
	case SnapshotInstalled:
		return "installed"
	case SnapshotRestored:
		return "restored"
	}
	return "unknown"
}

// RaftIndexes are this member's Raft positions: the last entry in its
// log, the last known committed and the last applied to its tree.
type RaftIndexes struct {
	Last, Commit, Applied uint64
}

// FollowerLag is one follower's distance behind the leader, in log
// entries: the leader's last index minus the last index the follower
// reported in its latest answer to an append.
type FollowerLag struct {
	ID       int64
	Observer bool
	Entries  uint64
	// Answered is false for a follower that has not answered an append
	// from this leader: Entries is then the leader's whole log.
	Answered bool
}

// FsyncTimes summarizes the syncs of this member's log appends since the
// start or the last ResetFsyncTimes, in whole milliseconds as ZooKeeper's
// fsynctime: count, sum, min and max (all zero before the first). Slow is
// how many took longer than fsync.warningthresholdms since the start.
type FsyncTimes struct {
	Count, SumMs, MinMs, MaxMs int64
	Slow                       int64
}

// Times summarize durations in whole milliseconds as one of ZooKeeper's
// AvgMinMaxCounters does: count, sum, min and max (all zero before the
// first).
type Times struct {
	Count, SumMs, MinMs, MaxMs int64
}
