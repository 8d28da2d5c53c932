package ensemble

import (
	"fmt"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/internal/base/avgminmax"
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

	times avgminmax.Counter // milliseconds
	slow  atomic.Int64      // never reset, as ZooKeeper's fsync_threshold_exceed_count by srst
}

// newFsyncStats returns stats that call a sync slow above threshold (zero
// means ZooKeeper's 1 s; below a millisecond, any sync of 1 ms or more).
func newFsyncStats(threshold time.Duration, log *zap.Logger) *fsyncStats {
	if threshold == 0 {
		threshold = defaultFsyncWarning
	}
	return &fsyncStats{warnMs: max(threshold.Milliseconds(), 0), log: log}
}

// record counts one sync that took d, of a log file of size bytes, and
// reports whether it was slow.
func (s *fsyncStats) record(d time.Duration, size int64) bool {
	ms := d.Milliseconds()
	s.times.Add(ms)
	if ms <= s.warnMs {
		return false
	}
	s.slow.Add(1)
	s.log.Warn(fmt.Sprintf("fsync-ing the write ahead log took %dms which will adversely effect operation latency. "+
		"File size is %d bytes. See the ZooKeeper troubleshooting guide", ms, size),
		zap.Int64("ms", ms), zap.Int64("thresholdMs", s.warnMs))
	return true
}

// FsyncTimes returns the log's sync times (mntr's fsynctime, the
// AdminServer's fsync_threshold_exceed_count).
func (n *Node) FsyncTimes() backend.FsyncTimes {
	t := &n.fsyncs.times
	return backend.FsyncTimes{Count: t.Count(), SumMs: t.Sum(), MinMs: t.Min(), MaxMs: t.Max(), Slow: n.fsyncs.slow.Load()}
}

// ResetFsyncTimes starts FsyncTimes' summary over (srst), not its Slow.
func (n *Node) ResetFsyncTimes() { n.fsyncs.times.Reset() }
