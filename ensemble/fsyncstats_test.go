package ensemble

import (
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// TestFsyncStatsSummaryAndSlowSyncs: whole milliseconds as ZooKeeper's
// fsynctime; a sync is slow only above the threshold, logged in
// ZooKeeper's words; a reset keeps the slow count.
func TestFsyncStatsSummaryAndSlowSyncs(t *testing.T) {
	core, logs := observer.New(zapcore.WarnLevel)
	s := newFsyncStats(0, zap.New(core))
	for _, d := range []time.Duration{300 * time.Microsecond, 7 * time.Millisecond, time.Second, 1001 * time.Millisecond} {
		s.record(d, 16<<20)
	}
	if tm := &s.times; tm.Count() != 4 || tm.Sum() != 0+7+1000+1001 || tm.Min() != 0 || tm.Max() != 1001 {
		t.Fatalf("count %d sum %d min %d max %d", tm.Count(), tm.Sum(), tm.Min(), tm.Max())
	}
	if s.slow.Load() != 1 || logs.Len() != 1 {
		t.Fatalf("%d slow syncs, %d warnings; want only the one above 1000 ms", s.slow.Load(), logs.Len())
	}
	want := "fsync-ing the write ahead log took 1001ms which will adversely effect operation latency. File size is 16777216 bytes."
	if msg := logs.All()[0].Message; !strings.HasPrefix(msg, want) {
		t.Fatalf("warning %q, want ZooKeeper's %q", msg, want)
	}
	s.times.Reset()
	if s.times.Count() != 0 || s.slow.Load() != 1 {
		t.Fatal("a reset of the summary must keep the slow count")
	}
	anySync := newFsyncStats(time.Nanosecond, zap.NewNop()) // fsync.warningthresholdms=0
	if anySync.record(900*time.Microsecond, 0) || !anySync.record(time.Millisecond, 0) {
		t.Fatal("threshold 0: a sync of 1 ms or more is slow, a shorter one is not")
	}
}

// TestNodeTimesItsLogSyncs: a member's appends are timed, and with
// forceSync=no (nothing synced) nothing is.
func TestNodeTimesItsLogSyncs(t *testing.T) {
	for _, noSync := range []bool{false, true} {
		c := newCluster(t, 1, func(cfg *Config) { cfg.NoSync = noSync })
		n := c.leader()
		mustPropose(t, n, newSession(1, 30000))
		mustPropose(t, n, &znode.Txn{Type: jute.OpCreate2, Session: 1, Time: 1,
			Req: jute.Marshal(&jute.CreateRequest{Path: "/a", ACL: open})})
		got := n.FsyncTimes()
		if noSync && got.Count != 0 || !noSync && got.Count < 2 {
			t.Fatalf("forceSync=no %v: %d syncs timed", noSync, got.Count)
		}
		n.ResetFsyncTimes()
		if n.FsyncTimes().Count != 0 {
			t.Fatal("ResetFsyncTimes kept the count")
		}
	}
}
