package storage

import (
	"errors"
	"fmt"
	"sync"

	"github.com/hashicorp/raft"

	"github.com/zkraft/zkraft/internal/base/stagetrace"
)

// AsyncLogStore takes Raft's disk write off Raft's critical path without
// weakening what a commit means.
//
// hashicorp/raft's leader writes a batch to its log, waits for the fsync,
// and only then sends it to the followers, which write and fsync it in
// turn: two bolt commits (four fdatasyncs) one after the other before a
// write is committed, and the leader's main loop blocked on the disk the
// whole time. ZooKeeper's leader logs and proposes in parallel. So does
// this store: StoreLogs queues the entries (readable at once) and returns,
// and one writer goroutine stores whatever has queued in one bolt
// transaction (packedlog.go), so writes also group across Raft's batches.
//
// Raft then counts the leader's own entries as stored before they are on
// disk, and its commit index may run ahead of what a majority has
// durably. Three rules restore the meaning of "committed" as "on disk on a
// majority" everywhere a client or another member can observe it:
//
//   - the FSM applies an entry only once it is on this member's disk or a
//     leader has sent this member a commit index that covers it
//     (fsm.durable, WaitApplicable): a leader's commit index only covers
//     entries on a majority's disks (the next two rules), and Raft's own
//     commit index counts a leader's entries before they are on its disk,
//     so a leader answers and fires watches only for entries on its disk
//     and on a follower's, and a follower need not wait for its own disk;
//   - a follower answers an AppendEntries only once everything Raft queued
//     before answering is on disk (appendTransport.serve), so the leader
//     counts a follower's entries only when they are durable;
//   - the leader never sends a commit index beyond its own durable index
//     (appendEncoder.commitLimit), so followers apply only what is on a
//     majority's disks.
//
// Entries Raft counted but no member applied may still be lost if the
// leader's machine dies before its fsync and another member fails too;
// nobody was told of them, and Raft's next leader overwrites them.
//
// A failed background write cannot be reported to Raft (StoreLogs has
// returned); the store refuses everything after it and calls fail, which
// stops the process, as ZooKeeper does when it cannot write its log.
type AsyncLogStore struct {
	inner raft.LogStore
	fail  func(error)

	mu       sync.Mutex
	queue    []*raft.Log // accepted, waiting for the writer; consecutive
	writing  []*raft.Log // being written; still answered from memory
	first    uint64      // first index (disk or memory); 0 when empty
	last     uint64      // last index accepted; 0 when empty
	durable  uint64      // entries up to here are on disk
	accepted uint64      // StoreLogs calls accepted (a sequence number)
	stored   uint64      // accepted calls now on disk
	told     uint64      // highest commit index a leader sent this member
	changed  chan struct{}
	err      error
	closing  bool

	wake chan struct{} // cap 1: the writer has work
	done chan struct{} // closed when the writer exits
}

var (
	_ raft.LogStore          = (*AsyncLogStore)(nil)
	_ raft.MonotonicLogStore = (*AsyncLogStore)(nil)
)

// ErrLogClosed is returned once the store is closing.
var ErrLogClosed = errors.New("storage: log store closed")

// NewAsyncLogStore wraps inner (which must be monotonic, as PackedLogStore
// is) and starts its writer. fail is called once if a write fails.
func NewAsyncLogStore(inner raft.LogStore, fail func(error)) (*AsyncLogStore, error) {
	first, err := inner.FirstIndex()
	if err != nil {
		return nil, fmt.Errorf("storage: log first index: %w", err)
	}
	last, err := inner.LastIndex()
	if err != nil {
		return nil, fmt.Errorf("storage: log last index: %w", err)
	}
	s := &AsyncLogStore{
		inner: inner, fail: fail,
		first: first, last: last, durable: last,
		changed: make(chan struct{}),
		wake:    make(chan struct{}, 1),
		done:    make(chan struct{}),
	}
	go s.writer()
	return s, nil
}

// IsMonotonic implements raft.MonotonicLogStore.
func (s *AsyncLogStore) IsMonotonic() bool { return true }

// FirstIndex implements raft.LogStore.
func (s *AsyncLogStore) FirstIndex() (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.first, nil
}

// LastIndex implements raft.LogStore.
func (s *AsyncLogStore) LastIndex() (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last, nil
}

// StoreLog implements raft.LogStore.
func (s *AsyncLogStore) StoreLog(l *raft.Log) error { return s.StoreLogs([]*raft.Log{l}) }

// StoreLogs implements raft.LogStore: the entries are queued for the
// writer and readable at once.
func (s *AsyncLogStore) StoreLogs(logs []*raft.Log) error {
	if len(logs) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if s.last != 0 && logs[0].Index != s.last+1 {
		return fmt.Errorf("storage: log entry %d does not follow %d", logs[0].Index, s.last)
	}
	if err := checkConsecutive(logs); err != nil {
		return err
	}
	if s.last == 0 {
		s.first = logs[0].Index
	}
	s.queue = append(s.queue, logs...)
	s.last = logs[len(logs)-1].Index
	s.accepted++
	stagetrace.Mark(stagetrace.Store, s.last)
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return nil
}

// GetLog implements raft.LogStore.
func (s *AsyncLogStore) GetLog(idx uint64, out *raft.Log) error {
	s.mu.Lock()
	if s.last == 0 || idx < s.first || idx > s.last {
		s.mu.Unlock()
		return raft.ErrLogNotFound
	}
	for _, run := range [2][]*raft.Log{s.queue, s.writing} {
		if len(run) > 0 && idx >= run[0].Index && idx <= run[len(run)-1].Index {
			*out = *run[idx-run[0].Index]
			s.mu.Unlock()
			return nil
		}
	}
	s.mu.Unlock()
	return s.inner.GetLog(idx, out)
}

// DeleteRange implements raft.LogStore. A range reaching entries not yet
// on disk first waits for them, so a deletion follows the writes before
// it; compaction, which only deletes applied (so durable) entries from the
// snapshot goroutine while Raft keeps appending, goes straight through.
// Raft deletes a prefix (compaction), a suffix (a follower's conflicting
// entries, from Raft's main goroutine, the only one that appends) or all.
func (s *AsyncLogStore) DeleteRange(lo, hi uint64) error {
	s.mu.Lock()
	err, target, unstored := s.err, s.accepted, hi > s.durable
	s.mu.Unlock()
	if err != nil {
		return err
	}
	if unstored {
		if err := s.WaitStored(target, nil); err != nil {
			return err
		}
	}
	if err := s.inner.DeleteRange(lo, hi); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == 0 || hi < s.first || lo > s.last || hi < lo {
		return nil
	}
	switch {
	case lo <= s.first && hi >= s.last:
		s.first, s.last, s.durable = 0, 0, 0
	case lo <= s.first:
		s.first = hi + 1
	default:
		s.last = lo - 1
		s.durable = min(s.durable, s.last)
	}
	return nil
}

// writer stores the queued entries, a batch per bolt transaction.
func (s *AsyncLogStore) writer() {
	defer close(s.done)
	for {
		s.mu.Lock()
		for len(s.queue) == 0 {
			if s.closing || s.err != nil {
				s.mu.Unlock()
				return
			}
			s.mu.Unlock()
			<-s.wake
			s.mu.Lock()
		}
		batch, seq := s.queue, s.accepted
		s.queue, s.writing = nil, batch
		s.mu.Unlock()

		stagetrace.Mark(stagetrace.DiskWrite, batch[len(batch)-1].Index)
		err := s.inner.StoreLogs(batch)

		s.mu.Lock()
		s.writing = nil
		if err != nil {
			s.err = fmt.Errorf("storage: background log write: %w", err)
			close(s.changed)
			closing := s.closing
			s.mu.Unlock()
			if !closing && s.fail != nil {
				s.fail(err)
			}
			return
		}
		s.durable = batch[len(batch)-1].Index
		stagetrace.Mark(stagetrace.Durable, s.durable)
		s.stored = seq
		close(s.changed)
		s.changed = make(chan struct{})
		s.mu.Unlock()
	}
}

// AcceptedSeq is the number of StoreLogs calls accepted so far.
func (s *AsyncLogStore) AcceptedSeq() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepted
}

// DurableIndex is the last entry known to be on disk.
func (s *AsyncLogStore) DurableIndex() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.durable
}

// WaitStored waits until the first seq accepted StoreLogs calls are on
// disk, stop is closed (ErrLogClosed) or a write fails.
func (s *AsyncLogStore) WaitStored(seq uint64, stop <-chan struct{}) error {
	return s.wait(func() bool { return s.stored >= seq }, stop)
}

// NoteLeaderCommit records a commit index received from a leader
// (appendTransport.serve). Any leader's, of any term: what it covers is
// committed, hence the same entries everywhere and on a majority's disks.
func (s *AsyncLogStore) NoteLeaderCommit(idx uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if idx <= s.told {
		return
	}
	s.told = idx
	if s.err == nil {
		close(s.changed)
		s.changed = make(chan struct{})
	}
}

// WaitApplicable waits until the committed entry idx may be applied: it
// is on this member's disk, or a leader's commit index covers it. Only
// committed entries, which are never truncated, are waited for this way.
func (s *AsyncLogStore) WaitApplicable(idx uint64, stop <-chan struct{}) error {
	return s.wait(func() bool { return s.durable >= idx || s.told >= idx }, stop)
}

func (s *AsyncLogStore) wait(ok func() bool, stop <-chan struct{}) error {
	s.mu.Lock()
	for {
		if ok() {
			s.mu.Unlock()
			return nil
		}
		if s.err != nil {
			err := s.err
			s.mu.Unlock()
			return err
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-stop:
			return ErrLogClosed
		}
		s.mu.Lock()
	}
}

// Close writes what is queued and stops the writer; later calls fail.
func (s *AsyncLogStore) Close() error {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = ErrLogClosed
		close(s.changed)
	}
	return nil
}

// checkConsecutive reports entries whose indexes do not follow one another.
func checkConsecutive(logs []*raft.Log) error {
	for i := 1; i < len(logs); i++ {
		if logs[i].Index != logs[i-1].Index+1 {
			return fmt.Errorf("storage: log entries %d and %d are not consecutive", logs[i-1].Index, logs[i].Index)
		}
	}
	return nil
}
