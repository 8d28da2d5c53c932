package ensemble

import (
	"math/rand/v2"
	"sync/atomic"

	"github.com/hashicorp/raft"
)

// logSize counts the log a member has applied since its last snapshot, in
// bytes and entries, for Config.SnapshotBytes (ZooKeeper's
// snapSizeLimitInKb). snapCount alone bounds the log by entries, and so
// the disk only for small values: with 1 MB values its two snapCounts of
// trailing log and one of growth were hundreds of gigabytes of raft.db,
// and a follower behind by a few thousand writes was sent gigabytes of log
// instead of a snapshot of the (much smaller) tree.
//
// As ZooKeeper's SyncRequestProcessor does, a member snapshots once the
// log since its last snapshot passes a random point between half the limit
// and the limit, drawn afresh after each snapshot, so the members of an
// ensemble do not all snapshot at once.
//
// add runs on the FSM goroutine after each batch; reset on the FSM
// goroutine when a snapshot is taken or installed; the Node reads the
// counts from its own goroutine.
type logSize struct {
	limit int64 // Config.SnapshotBytes; 0: no size trigger

	bytes   atomic.Int64 // applied since the last snapshot
	entries atomic.Int64
	trigger atomic.Int64 // bytes at which due is signalled; 0: never

	// lastBytes and lastEntries are the counts of the interval the last
	// snapshot ended (its average entry size sizes the trailing log).
	lastBytes, lastEntries atomic.Int64

	due chan struct{} // cap 1: the log passed trigger
}

func newLogSize(limit int64) *logSize {
	s := &logSize{limit: max(limit, 0), due: make(chan struct{}, 1)}
	s.reset()
	return s
}

// add counts a batch of applied entries and signals due when the log
// passed the trigger.
func (s *logSize) add(logs []*raft.Log) {
	var n int64
	for _, l := range logs {
		n += int64(len(l.Data))
	}
	s.entries.Add(int64(len(logs)))
	total := s.bytes.Add(n)
	if t := s.trigger.Load(); t > 0 && total >= t {
		select {
		case s.due <- struct{}{}:
		default:
		}
	}
}

// reset starts a new interval: a snapshot was taken (at the state applied
// so far) or installed.
func (s *logSize) reset() {
	if e := s.entries.Swap(0); e > 0 {
		s.lastEntries.Store(e)
		s.lastBytes.Store(s.bytes.Load())
	}
	s.bytes.Store(0)
	if s.limit > 1 {
		half := s.limit / 2
		s.trigger.Store(half + rand.Int64N(s.limit-half))
	}
}

// avgEntry is the mean entry size in bytes, from the interval the last
// snapshot ended or, before one, from the current one; 0 if unknown.
func (s *logSize) avgEntry() int64 {
	if e := s.lastEntries.Load(); e > 0 {
		return s.lastBytes.Load() / e
	}
	if e := s.entries.Load(); e > 0 {
		return s.bytes.Load() / e
	}
	return 0
}

// minTrailingEntries is the least trailing log the size limit leaves.
const minTrailingEntries = 128

// trailing is how many entries of log to keep behind a snapshot: count
// (from snapCount) unless that many entries of the average size would be
// more than half the size limit. The log on disk is then at most about
// 1.5 times the limit: the trailing half and up to the whole limit since
// the last snapshot.
func (s *logSize) trailing(count uint64) uint64 {
	avg := s.avgEntry()
	if s.limit == 0 || avg == 0 {
		return count
	}
	fit := uint64(s.limit / 2 / avg)
	return min(count, max(fit, minTrailingEntries))
}
