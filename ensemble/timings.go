package ensemble

import (
	"sync/atomic"
	"time"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/internal/base/avgminmax"
)

// timings are ZooKeeper's snapshottime, election_time and
// startup_snap_load_time summaries (whole milliseconds) and its
// looking_count, as mntr prints them; srst starts them over
// (ResetTimings), as ZooKeeper's ServerMetrics.resetAll does.
type timings struct {
	snapshots avgminmax.Counter // snapshots this member wrote
	elections avgminmax.Counter // how long it knew no leader, per leader it learned of
	startup   avgminmax.Counter // its own snapshot loaded at start
	looking   atomic.Int64      // times it found itself without a leader
}

// snapshotTook records a snapshot's duration and passes it on to hook.
func (t *timings) snapshotTook(hook func(backend.SnapshotKind, time.Duration)) func(backend.SnapshotKind, time.Duration) {
	return func(kind backend.SnapshotKind, d time.Duration) {
		switch kind {
		case backend.SnapshotTaken:
			t.snapshots.Add(d.Milliseconds())
		case backend.SnapshotRestored:
			t.startup.Add(d.Milliseconds())
		}
		if hook != nil {
			hook(kind, d)
		}
	}
}

func times(c *avgminmax.Counter) backend.Times {
	return backend.Times{Count: c.Count(), SumMs: c.Sum(), MinMs: c.Min(), MaxMs: c.Max()}
}

// SnapshotTimes are the snapshots this member wrote (snapshottime).
func (n *Node) SnapshotTimes() backend.Times { return times(&n.timings.snapshots) }

// ElectionTimes are how long this member knew no leader before it learned
// of each next one (election_time).
func (n *Node) ElectionTimes() backend.Times { return times(&n.timings.elections) }

// StartupSnapLoadTimes are the loads of this member's own snapshot at
// start (startup_snap_load_time).
func (n *Node) StartupSnapLoadTimes() backend.Times { return times(&n.timings.startup) }

// LookingCount is how many times this member found itself without a
// leader, its start included (looking_count).
func (n *Node) LookingCount() int64 { return n.timings.looking.Load() }

// ResetTimings starts the timings over (srst).
func (n *Node) ResetTimings() {
	n.timings.snapshots.Reset()
	n.timings.elections.Reset()
	n.timings.startup.Reset()
	n.timings.looking.Store(0)
}
