package ensemble

import (
	"testing"
	"time"
)

// TestTimings: a member counts its start without a leader (looking_count)
// and how long it waited for one (election_time), each snapshot it
// writes (snapshottime) and, restarted, the load of its own snapshot
// (startup_snap_load_time); ResetTimings starts them over.
func TestTimings(t *testing.T) {
	c := newCluster(t, 3, nil)
	l := c.leader()
	f := c.follower()
	deadline := time.Now().Add(5 * time.Second)
	for f.LookingCount() < 1 || f.ElectionTimes().Count < 1 {
		if time.Now().After(deadline) {
			t.Fatalf("follower: looking %d, elections %+v", f.LookingCount(), f.ElectionTimes())
		}
		time.Sleep(10 * time.Millisecond)
	}
	mustPropose(t, l, newSession(0x201, 30000))
	if err := f.Snapshot(); err != nil {
		t.Fatal(err)
	}
	if got := f.SnapshotTimes(); got.Count != 1 || got.MaxMs < got.MinMs {
		t.Fatalf("after a snapshot: %+v", got)
	}
	f.ResetTimings()
	if f.LookingCount() != 0 || f.ElectionTimes().Count != 0 || f.SnapshotTimes().Count != 0 {
		t.Fatalf("after reset: looking %d, elections %+v, snapshots %+v", f.LookingCount(), f.ElectionTimes(), f.SnapshotTimes())
	}
	id := f.ID()
	c.stop(id)
	c.restart(id)
	if got := c.nodes[id].StartupSnapLoadTimes(); got.Count != 1 {
		t.Fatalf("restarted from its snapshot: startup loads %+v", got)
	}
}
