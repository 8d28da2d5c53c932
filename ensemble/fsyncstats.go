package ensemble

import (
	"fmt"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// defaultFsyncWarning is ZooKeeper's fsync.warningthresholdms default.
const defaultFsyncWarning = time.Second

// fsyncStats time the syncs of a member's log appends, as ZooKeeper's
// FileTxnLog times its commit: the fsynctime summary of mntr
// (zk_avg/min/max/cnt/sum_fsynctime, whole milliseconds) and the count of
// syncs slower than fsync.warningthresholdms, each of which is logged in
// ZooKeeper's words, since operators alert on that line.
type fsyncStats struct {
	warnMs int64 // a sync of more whole milliseconds than this is slow
	log    *zap.Logger

	count, total, min, max atomic.Int64 // min is -1 before the first sync
	slow                   atomic.Int64 // never reset, as ZooKeeper's fsync_threshold_exceed_count by srst
}

// newFsyncStats returns stats that call a sync slow above threshold (zero
// means ZooKeeper's 1 s; below a millisecond, any sync of 1 ms or more).
func newFsyncStats(threshold time.Duration, log *zap.Logger) *fsyncStats {
	if threshold == 0 {
		threshold = defaultFsyncWarning
	}
	s := &fsyncStats{warnMs: max(threshold.Milliseconds(), 0), log: log}
	s.reset()
	return s
}

// record counts one sync that took d, of a log file of size bytes, and
// reports whether it was slow.
func (s *fsyncStats) record(d time.Duration, size int64) bool {
	ms := d.Milliseconds()
	s.count.Add(1)
	s.total.Add(ms)
	for {
		m := s.min.Load()
		if (m >= 0 && m <= ms) || s.min.CompareAndSwap(m, ms) {
			break
		}
	}
	for {
		m := s.max.Load()
		if m >= ms || s.max.CompareAndSwap(m, ms) {
			break
		}
	}
	if ms <= s.warnMs {
		return false
	}
	s.slow.Add(1)
	s.log.Warn(fmt.Sprintf("fsync-ing the write ahead log took %dms which will adversely effect operation latency. "+
		"File size is %d bytes. See the ZooKeeper troubleshooting guide", ms, size),
		zap.Int64("ms", ms), zap.Int64("thresholdMs", s.warnMs))
	return true
}

// reset starts the summary over (srst); the slow count stays.
func (s *fsyncStats) reset() {
	s.count.Store(0)
	s.total.Store(0)
	s.min.Store(-1)
	s.max.Store(0)
}

// FsyncTimes summarizes the syncs of this member's log appends since the
// start or the last ResetFsyncTimes, in whole milliseconds as ZooKeeper's
// fsynctime: count, sum, min and max (all zero before the first). Slow is
// how many took longer than fsync.warningthresholdms since the start.
type FsyncTimes struct {
	Count, SumMs, MinMs, MaxMs int64
	Slow                       int64
}

// FsyncTimes returns the log's sync times (mntr's fsynctime, the
// AdminServer's fsync_threshold_exceed_count).
func (n *Node) FsyncTimes() FsyncTimes {
	s := n.fsyncs
	t := FsyncTimes{Count: s.count.Load(), SumMs: s.total.Load(), MaxMs: s.max.Load(), Slow: s.slow.Load()}
	if m := s.min.Load(); m > 0 {
		t.MinMs = m
	}
	return t
}

// ResetFsyncTimes starts FsyncTimes' summary over (srst), not its Slow.
func (n *Node) ResetFsyncTimes() { n.fsyncs.reset() }
