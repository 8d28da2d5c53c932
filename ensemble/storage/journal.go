package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	"go.uber.org/zap"
)

// Journal makes Raft's log writes durable with one write and one
// fdatasync each, and keeps raft-boltdb as the log of record.
//
// A bolt transaction costs two fdatasyncs (the pages, then the meta page
// that points at them) plus the pages of the B+tree it rewrites. Every
// follower pays that before it may answer an append, and on the 2-core
// test machine it was 0.9-1.1 ms of a lone write's ~1.8 ms (three
// members share one disk, so under load it was also most of the disk's
// work). ZooKeeper's log is an append-only file synced once per group.
//
// So a batch first goes to a preallocated journal file: one pwrite of a
// checksummed record, one fdatasync, and the batch is durable (about a
// quarter of the bolt commit on the same disk). The entries stay readable
// from memory, and a flusher goroutine stores what has accumulated into
// the packed bolt log (packedlog.go) every journalFlushDelay, or at once
// when journalFlushEntries are waiting, many batches per bolt transaction
// (each costs two fdatasyncs and the B+tree pages it rewrites, so fewer
// and larger ones are cheaper). Records fill the journal's two halves in
// turn, one generation per half; a wrap to the other half stores nothing
// into bolt (journal_header.go).
//
// On open, records of the current generation (and of the one before it,
// when its header names them) that bolt does not have yet (index above
// bolt's last) are stored into bolt before Raft starts, and the journal
// starts a fresh generation. A truncation that reaches the log's last
// entry (a follower's conflicting suffix, a snapshot install)
// empties the journal first, so a crash cannot bring removed entries
// back; a compaction of old entries leaves it alone, since replay only
// adds entries above bolt's last.
//
// Layout: two header slots (offsets 0 and 512, the generation's parity
// picks the slot, the valid one with the higher generation wins, so a
// torn header write loses nothing), records from journalHeaderSize in
// two halves:
//
//	uint32 payload length, uint32 CRC-32C of generation+payload,
//	uint64 generation, payload (a pack of consecutive entries, packcodec.go)
//
// Reading stops where the generation's records stop: zeros, another
// generation's bytes, or a record that is torn, has a bad checksum or does
// not decode. With nothing valid of the generation after that point it is
// the end (a bad record of the generation there is the torn tail of a
// crash, never acknowledged: it is cut, and logged); with a valid record
// of the generation after it, the damage is in the middle of acknowledged
// records and opening fails with a *CorruptError naming the file and the
// byte offset (journal_scan.go).
type Journal struct {
	inner raft.LogStore
	f     File
	path  string
	log   *zap.Logger
	size  int64

	// writeMu serializes appends, wraps and truncations (StoreLogs comes
	// from AsyncLogStore's single writer; DeleteRange from Raft).
	writeMu  sync.Mutex
	gen      uint64
	start    int64  // where this generation's records begin
	tail     int64  // where the next record goes
	genLast  uint64 // last entry written in this generation; 0 for none
	prevLast uint64 // last entry of the previous generation if the header still names it, else 0
	scratch  []byte

	// flushMu serializes stores into inner (flusher and synchronous flushes).
	flushMu sync.Mutex

	mu      sync.Mutex
	pending []*raft.Log // durable here, not yet in inner; consecutive
	err     error       // a failed background store; everything fails after it
	closed  bool

	// NoSync leaves appends unsynced (zoo.cfg forceSync=no): an entry is
	// acknowledged once written to the page cache, as ZooKeeper's log
	// then is. Headers (a wrap) and bolt's transactions are still synced.
	// Set it before the first append.
	NoSync bool
	// Syncs counts the fdatasyncs made (tests).
	Syncs atomic.Int64
	// Timing, if set before the first append, is told how long each
	// append's sync took and the journal's size.
	Timing func(d time.Duration, size int64)

	fail  func(error)
	wake  chan struct{} // cap 1: the flusher has work
	full  chan struct{} // cap 1: flushAt entries are pending; flush without waiting
	stop  chan struct{}
	done  chan struct{}
	delay atomic.Int64 // a time.Duration; tests change it while the flusher runs
	// flushAt is the pending count that starts a flush before delay
	// (it also keeps the flusher a whole half ahead of the wraps).
	flushAt int
}

const (
	journalHeaderSize = 4096
	journalSlotSize   = 512
	journalRecordHead = 16
	// journalDefaultSize is the journal file's size when Config leaves it 0.
	journalDefaultSize = 16 << 20
	// journalFlushDelay is how long entries may wait in the journal for
	// the next bolt transaction. Every transaction costs a follower two
	// fdatasyncs; at 20 ms they were 13% of its CPU under session churn.
	journalFlushDelay = 200 * time.Millisecond
	// journalFlushEntries pending entries start a flush at once, so a fast
	// write load neither holds many entries in memory nor reaches a wrap
	// whose other half is not yet in bolt (a half of the default size
	// holds tens of thousands of entries).
	journalFlushEntries = 4096
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

var (
	_ raft.LogStore          = (*Journal)(nil)
	_ raft.MonotonicLogStore = (*Journal)(nil)
)

// errJournalClosed is returned after Close.
var errJournalClosed = errors.New("storage: journal closed")

// OpenJournal opens (or creates, size bytes, written out so that syncs
// never allocate) the journal at path in front of inner, replays into
// inner what it lacks, and starts the flusher. fail is called once if a
// background store into inner fails; log (nil: quietly) is told of a torn
// tail cut on open. A damaged journal is a *CorruptError.
func OpenJournal(path string, size int64, inner raft.LogStore, fail func(error), log *zap.Logger) (*Journal, error) {
	return openJournalFile(path, size, inner, fail, log, openOSFile)
}

// openJournalFile is OpenJournal with the file opened by open.
func openJournalFile(path string, size int64, inner raft.LogStore, fail func(error), log *zap.Logger, open OpenFileFunc) (*Journal, error) {
	if log == nil {
		log = zap.NewNop()
	}
	if size <= 0 {
		size = journalDefaultSize
	}
	if size < journalHeaderSize+2*journalSlotSize {
		return nil, fmt.Errorf("storage: journal size %d too small", size)
	}
	f, err := open(path)
	if err != nil {
		return nil, fmt.Errorf("storage: open journal: %w", err)
	}
	j := &Journal{
		inner: inner, f: f, path: path, log: log, size: size, fail: fail, flushAt: journalFlushEntries,
		wake: make(chan struct{}, 1), full: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
	}
	j.delay.Store(int64(journalFlushDelay))
	if err := j.recover(path); err != nil {
		f.Close()
		return nil, err
	}
	go j.flusher()
	return j, nil
}

// IsMonotonic implements raft.MonotonicLogStore.
func (j *Journal) IsMonotonic() bool { return true }

// FirstIndex implements raft.LogStore.
func (j *Journal) FirstIndex() (uint64, error) {
	first, err := j.inner.FirstIndex()
	if err != nil || first != 0 {
		return first, err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.pending) > 0 {
		return j.pending[0].Index, nil
	}
	// The flusher may have stored the pending entries meanwhile.
	return j.inner.FirstIndex()
}

// LastIndex implements raft.LogStore.
func (j *Journal) LastIndex() (uint64, error) {
	j.mu.Lock()
	if n := len(j.pending); n > 0 {
		last := j.pending[n-1].Index
		j.mu.Unlock()
		return last, nil
	}
	j.mu.Unlock()
	return j.inner.LastIndex()
}

// GetLog implements raft.LogStore.
func (j *Journal) GetLog(idx uint64, out *raft.Log) error {
	j.mu.Lock()
	if n := len(j.pending); n > 0 && idx >= j.pending[0].Index && idx <= j.pending[n-1].Index {
		*out = *j.pending[idx-j.pending[0].Index]
		j.mu.Unlock()
		return nil
	}
	j.mu.Unlock()
	// Not pending: inner has it (entries leave pending only once stored).
	return j.inner.GetLog(idx, out)
}

// StoreLog implements raft.LogStore.
func (j *Journal) StoreLog(l *raft.Log) error { return j.StoreLogs([]*raft.Log{l}) }

// StoreLogs implements raft.LogStore: logs are durable when it returns.
func (j *Journal) StoreLogs(logs []*raft.Log) error {
	if len(logs) == 0 {
		return nil
	}
	j.writeMu.Lock()
	defer j.writeMu.Unlock()
	if err := j.check(); err != nil {
		return err
	}
	j.mu.Lock()
	if n := len(j.pending); n > 0 && logs[0].Index != j.pending[n-1].Index+1 {
		j.mu.Unlock()
		return fmt.Errorf("storage: log entry %d does not follow %d", logs[0].Index, j.pending[n-1].Index)
	}
	j.mu.Unlock()
	if err := checkConsecutive(logs); err != nil {
		return err
	}
	rec := appendJournalRecord(j.scratch[:0], logs)
	if int64(cap(rec)) <= j.half() {
		j.scratch = rec // a larger record goes to bolt, below
	}
	if int64(len(rec)) > j.half() || len(rec)-journalRecordHead > 1<<31 {
		// Larger than a half: straight to bolt, after what is pending,
		// and the journal starts over (its records must stay consecutive).
		if err := j.flush(); err != nil {
			return err
		}
		for rest := logs; len(rest) > 0; {
			n := flushChunk(rest)
			if err := j.inner.StoreLogs(rest[:n]); err != nil {
				return fmt.Errorf("storage: store log: %w", err)
			}
			rest = rest[n:]
		}
		return j.begin(false)
	}
	if j.tail+int64(len(rec)) > j.start+j.half() {
		if err := j.wrap(); err != nil {
			return err
		}
	}
	sealJournalRecord(rec, j.gen)
	if _, err := j.f.WriteAt(rec, j.tail); err != nil {
		// Part of the record may be on disk: a torn tail, cut on open.
		return j.broken(fmt.Errorf("storage: journal write: %w", err))
	}
	if !j.NoSync {
		start := time.Now()
		if err := j.sync(); err != nil {
			return err
		}
		if j.Timing != nil {
			j.Timing(time.Since(start), j.size)
		}
	}
	j.tail += int64(len(rec))
	j.genLast = logs[len(logs)-1].Index
	j.mu.Lock()
	j.pending = append(j.pending, logs...)
	full := len(j.pending) >= j.flushAt
	j.mu.Unlock()
	select {
	case j.wake <- struct{}{}:
	default:
	}
	if full {
		select {
		case j.full <- struct{}{}:
		default:
		}
	}
	return nil
}

// appendJournalRecord appends to buf a record of logs (a pack, after its
// length), to be sealed with its generation once that is known.
func appendJournalRecord(buf []byte, logs []*raft.Log) []byte {
	start := len(buf)
	buf = append(buf, make([]byte, journalRecordHead)...)
	buf = appendUncheckedPack(buf, logs)
	binary.BigEndian.PutUint32(buf[start:start+4], uint32(len(buf)-start-journalRecordHead))
	return buf
}

// sealJournalRecord stamps rec with generation gen and its checksum.
func sealJournalRecord(rec []byte, gen uint64) {
	binary.BigEndian.PutUint64(rec[8:16], gen)
	binary.BigEndian.PutUint32(rec[4:8], crc32.Checksum(rec[8:], crcTable))
}

// check returns the store's error, if any.
func (j *Journal) check() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil {
		return j.err
	}
	if j.closed {
		return errJournalClosed
	}
	return nil
}

// journalFlushBytes bounds one store into inner: a bolt transaction holds
// every value it writes (and their encodings) until it commits, so large
// entries go in several transactions of about this size instead of one
// that pins hundreds of megabytes.
const journalFlushBytes = 16 << 20

// flush stores everything pending into inner now, in transactions of at
// most journalFlushBytes (and at least one entry).
func (j *Journal) flush() error {
	j.flushMu.Lock()
	defer j.flushMu.Unlock()
	j.mu.Lock()
	left := len(j.pending)
	err := j.err
	j.mu.Unlock()
	if err != nil {
		return err
	}
	for left > 0 {
		j.mu.Lock()
		batch := j.pending[:flushChunk(j.pending[:left])]
		j.mu.Unlock()
		if err := j.inner.StoreLogs(batch); err != nil {
			err = fmt.Errorf("storage: log store behind the journal: %w", err)
			j.mu.Lock()
			if j.err == nil {
				j.err = err
			}
			j.mu.Unlock()
			return err
		}
		j.mu.Lock()
		// Appends only extend pending while the batch was stored.
		j.pending = append([]*raft.Log(nil), j.pending[len(batch):]...)
		j.mu.Unlock()
		left -= len(batch)
	}
	return nil
}

// flushChunk is how many of logs (at least one) fit in journalFlushBytes.
func flushChunk(logs []*raft.Log) int {
	size := 0
	for i, l := range logs {
		size += len(l.Data) + len(l.Extensions)
		if size > journalFlushBytes && i > 0 {
			return i
		}
	}
	return len(logs)
}

// flusher stores pending entries into inner, journalFlushDelay after the
// first of them arrived or as soon as flushAt of them are pending.
func (j *Journal) flusher() {
	defer close(j.done)
	t := time.NewTimer(time.Hour)
	t.Stop()
	for {
		select {
		case <-j.wake:
		case <-j.stop:
			return
		}
		t.Reset(time.Duration(j.delay.Load()))
		select {
		case <-t.C:
		case <-j.full:
			t.Stop()
		case <-j.stop:
			t.Stop()
			return
		}
		select { // this flush takes what the signal was about
		case <-j.full:
		default:
		}
		if err := j.flush(); err != nil {
			if j.fail != nil {
				j.fail(err)
			}
			return
		}
	}
}

// DeleteRange implements raft.LogStore. A compaction of entries inner
// already holds (all of them below inner's last) touches neither the
// journal nor the pending entries, which lie above inner's last: it goes
// straight to inner while appends go on. Otherwise pending entries are
// stored into inner first. A range that reaches the last entry also
// empties the journal, before inner drops it, so a crash cannot replay
// it; appends wait for it. A compaction that reaches pending entries
// leaves the journal alone and lets appends go on during inner's delete:
// replay only adds entries above inner's last, which a compaction keeps.
//
// (Raft compacts after every snapshot, under a write load every few
// seconds; storing pending entries under writeMu first held up that
// member's appends for the length of a bolt transaction, up to 34 ms.)
func (j *Journal) DeleteRange(lo, hi uint64) error {
	innerLast, err := j.inner.LastIndex()
	if err != nil {
		return fmt.Errorf("storage: log last index: %w", err)
	}
	if hi < innerLast {
		if err := j.check(); err != nil {
			return err
		}
		return j.inner.DeleteRange(lo, hi)
	}
	j.writeMu.Lock()
	if err := j.check(); err != nil {
		j.writeMu.Unlock()
		return err
	}
	if err := j.flush(); err != nil {
		j.writeMu.Unlock()
		return err
	}
	last, err := j.inner.LastIndex()
	if err != nil {
		j.writeMu.Unlock()
		return fmt.Errorf("storage: log last index: %w", err)
	}
	if hi < last {
		j.writeMu.Unlock()
		return j.inner.DeleteRange(lo, hi)
	}
	defer j.writeMu.Unlock()
	if j.genLast != 0 || j.prevLast != 0 {
		if err := j.begin(false); err != nil {
			return err
		}
	}
	return j.inner.DeleteRange(lo, hi)
}

// Close stores what is pending into inner and closes the file.
func (j *Journal) Close() error {
	j.writeMu.Lock()
	defer j.writeMu.Unlock()
	j.mu.Lock()
	if j.closed {
		j.mu.Unlock()
		return nil
	}
	j.closed = true
	j.mu.Unlock()
	close(j.stop)
	<-j.done
	err := j.flush()
	if cerr := j.f.Close(); err == nil {
		err = cerr
	}
	return err
}
