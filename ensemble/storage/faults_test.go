package storage

// The storage conformance and fault-injection suite. Every change to this
// package must keep these passing; they check the rules in doc.go:
//
//   - no entry is reported durable that is not (a failed, short or
//     unsynced write is never acknowledged, and what a restart reads back
//     is what was acknowledged, plus at most the unacknowledged batch);
//   - a storage error surfaces as an error and through the fail callback
//     (Node.fatal in a member), and the store stays failed;
//   - a corrupt file is refused naming the file and the offset;
//   - a torn tail is cut and the log goes on.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
)

// fault is one failure a faultFile injects into its next write or sync.
type fault int

const (
	faultNone fault = iota
	faultENOSPC
	faultEIOWrite
	faultShortWrite
	faultSyncEIODropped // fsync fails and the kernel dropped the unsynced pages
	faultSyncEIOKept    // fsync fails but the pages reached the disk anyway
)

func (f fault) String() string {
	return [...]string{"none", "ENOSPC", "EIO on write", "short write", "fsync EIO, pages dropped", "fsync EIO, pages kept"}[f]
}

// faultFile is a real file that fails its next write or sync on demand,
// and remembers what each unsynced write overwrote so that a failed sync
// or a crash can drop it, as a kernel's page cache may.
type faultFile struct {
	*os.File
	mu       sync.Mutex
	next     fault
	unsynced []undo
	writes   int
}

// undo is what one unsynced write overwrote.
type undo struct {
	off int64
	old []byte
}

func (f *faultFile) arm(ft fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.next = ft
}

func (f *faultFile) WriteAt(b []byte, off int64) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writes++
	switch f.next {
	case faultENOSPC:
		f.next = faultNone
		return 0, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	case faultEIOWrite:
		f.next = faultNone
		return 0, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.EIO}
	case faultShortWrite:
		f.next = faultNone
		n, err := f.write(b[:len(b)/2], off)
		if err != nil {
			return n, err
		}
		return n, io.ErrShortWrite
	}
	return f.write(b, off)
}

// write writes b at off, keeping what it overwrote.
func (f *faultFile) write(b []byte, off int64) (int, error) {
	old := make([]byte, len(b))
	n, _ := f.File.ReadAt(old, off)
	f.unsynced = append(f.unsynced, undo{off: off, old: old[:n]})
	return f.File.WriteAt(b, off)
}

func (f *faultFile) Datasync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch f.next {
	case faultSyncEIODropped:
		f.next = faultNone
		f.dropUnsynced()
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: syscall.EIO}
	case faultSyncEIOKept:
		f.next = faultNone
		f.unsynced = nil
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: syscall.EIO}
	}
	f.unsynced = nil
	return f.File.Sync()
}

// dropUnsynced puts back what the unsynced writes overwrote, newest first.
func (f *faultFile) dropUnsynced() {
	for i := len(f.unsynced) - 1; i >= 0; i-- {
		u := f.unsynced[i]
		_, _ = f.File.WriteAt(u.old, u.off)
	}
	f.unsynced = nil
}

// crash drops what was never synced and closes the file.
func (f *faultFile) crash() {
	f.mu.Lock()
	f.dropUnsynced()
	f.mu.Unlock()
	f.File.Close()
}

// openFaultJournal opens a journal on a faultFile.
func openFaultJournal(t *testing.T, dir string, inner raft.LogStore, fail func(error)) (*Journal, *faultFile) {
	t.Helper()
	var ff *faultFile
	open := func(path string) (File, error) {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, err
		}
		ff = &faultFile{File: f}
		return ff, nil
	}
	j, err := openJournalFile(filepath.Join(dir, JournalFile), 1<<20, inner, fail, nil, open)
	if err != nil {
		t.Fatal(err)
	}
	j.delay.Store(int64(time.Hour))
	return j, ff
}

// wantErrno checks err reports the fault's cause.
func wantErrno(t *testing.T, err error, ft fault) {
	t.Helper()
	want := map[fault]error{faultENOSPC: syscall.ENOSPC, faultEIOWrite: syscall.EIO, faultShortWrite: io.ErrShortWrite,
		faultSyncEIODropped: syscall.EIO, faultSyncEIOKept: syscall.EIO}[ft]
	if !errors.Is(err, want) {
		t.Fatalf("error %v, want one reporting %v", err, want)
	}
}

// TestFaultJournalWriteAndSyncErrors: every kind of write and sync
// failure under the journal fails the append, fails every append after
// it, reports nothing beyond the acknowledged entries, and a restart reads
// back every acknowledged entry (and of the failed batch at most what
// reached the disk, never a torn piece of it).
func TestFaultJournalWriteAndSyncErrors(t *testing.T) {
	for _, ft := range []fault{faultENOSPC, faultEIOWrite, faultShortWrite, faultSyncEIODropped, faultSyncEIOKept} {
		t.Run(ft.String(), func(t *testing.T) {
			dir, inner := t.TempDir(), raft.NewInmemStore()
			j, ff := openFaultJournal(t, dir, inner, nil)
			for first := uint64(1); first <= 9; first += 2 {
				mustStore(t, j, journalLogs(first, 2, 1))
			}
			ff.arm(ft)
			err := j.StoreLogs(journalLogs(11, 2, 1))
			wantErrno(t, err, ft)
			if err := j.StoreLogs(journalLogs(11, 2, 1)); err == nil {
				t.Fatal("an append after a failed write or sync succeeded")
			}
			if last, _ := j.LastIndex(); last != 10 {
				t.Fatalf("last index %d after a failed append, want 10", last)
			}
			close(j.stop)
			<-j.done
			ff.crash()

			j = openTestJournal(t, dir, 1<<20, inner)
			defer j.Close()
			last, _ := j.LastIndex()
			if last != 10 && !(ft == faultSyncEIOKept && last == 12) {
				t.Fatalf("after a restart the log ends at %d, want 10 (or 12 where the pages reached the disk)", last)
			}
			checkLog(t, j, 1, last, 1)
		})
	}
}

// TestFaultMemberStackReportsOnlyDurable: the member's stack (async
// writer, journal on a failing file, packed bolt log) after a failed
// write: fail is called with the cause, the durable index stays at the
// last acknowledged entry, and waiting for a later entry fails rather
// than release it.
func TestFaultMemberStackReportsOnlyDurable(t *testing.T) {
	for _, ft := range []fault{faultENOSPC, faultShortWrite, faultSyncEIODropped} {
		t.Run(ft.String(), func(t *testing.T) {
			dir := t.TempDir()
			b, err := raftboltdb.NewBoltStore(filepath.Join(dir, LogStoreFile))
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			packed, err := NewPackedLogStore(ChunkedLogStore{b})
			if err != nil {
				t.Fatal(err)
			}
			failed := make(chan error, 2)
			fail := func(err error) { failed <- err }
			j, ff := openFaultJournal(t, dir, packed, fail)
			defer j.Close()
			async, err := NewAsyncLogStore(j, fail)
			if err != nil {
				t.Fatal(err)
			}
			defer async.Close()
			mustStore(t, async, journalLogs(1, 10, 1))
			if err := async.WaitApplicable(10, nil); err != nil {
				t.Fatal(err)
			}
			ff.arm(ft)
			mustStore(t, async, journalLogs(11, 2, 1)) // queued: the write fails in the background
			select {
			case err := <-failed:
				wantErrno(t, err, ft)
			case <-time.After(5 * time.Second):
				t.Fatal("a failed background write did not call fail")
			}
			if d := async.DurableIndex(); d != 10 {
				t.Fatalf("durable index %d after a failed write, want 10", d)
			}
			if err := async.WaitApplicable(12, nil); err == nil {
				t.Fatal("an entry whose write failed was released as durable")
			}
			if err := async.StoreLogs(journalLogs(13, 1, 1)); err == nil {
				t.Fatal("the store took an append after a failed write")
			}
		})
	}
}

// failingLogStore is a bolt log whose writes fail with EIO once failing.
type failingLogStore struct {
	raft.LogStore
	mu      sync.Mutex
	failing bool
}

func (s *failingLogStore) StoreLogs(logs []*raft.Log) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failing {
		return fmt.Errorf("bolt commit: %w", syscall.EIO)
	}
	return s.LogStore.StoreLogs(logs)
}

// TestFaultBoltErrorBehindTheJournal: raft.db failing under the journal
// (the flush of journaled entries into bolt) calls fail with the cause
// and fails later appends; the acknowledged entries are still in the
// journal and reach bolt when the member opens again.
func TestFaultBoltErrorBehindTheJournal(t *testing.T) {
	dir := t.TempDir()
	b, err := raftboltdb.NewBoltStore(filepath.Join(dir, LogStoreFile))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	bolt := &failingLogStore{LogStore: ChunkedLogStore{b}}
	packed, err := NewPackedLogStore(bolt)
	if err != nil {
		t.Fatal(err)
	}
	failed := make(chan error, 1)
	j, _ := openFaultJournal(t, dir, packed, func(err error) { failed <- err })
	j.delay.Store(int64(time.Millisecond))
	mustStore(t, j, journalLogs(1, 5, 1))
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		if last, err := packed.LastIndex(); err == nil && last == 5 {
			break // the first batch reached bolt
		}
		if time.Now().After(deadline) {
			t.Fatal("the first batch never reached bolt")
		}
	}
	bolt.mu.Lock()
	bolt.failing = true
	bolt.mu.Unlock()
	mustStore(t, j, journalLogs(6, 5, 1)) // durable in the journal; wakes the flusher
	select {
	case err := <-failed:
		if !errors.Is(err, syscall.EIO) {
			t.Fatalf("fail called with %v, want EIO", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a failed bolt store did not call fail")
	}
	if err := j.StoreLogs(journalLogs(11, 1, 1)); !errors.Is(err, syscall.EIO) {
		t.Fatalf("append after a failed bolt store: %v, want EIO", err)
	}
	_ = j.Close()
	bolt.mu.Lock()
	bolt.failing = false
	bolt.mu.Unlock()

	packed, err = NewPackedLogStore(bolt)
	if err != nil {
		t.Fatal(err)
	}
	j = openTestJournal(t, dir, 1<<20, packed)
	defer j.Close()
	checkLog(t, packed, 1, 10, 1)
}

// writeRecords stores n two-entry records in a fresh journal in dir and
// crashes it, returning each record's offset and the end of the last.
func writeRecords(t *testing.T, dir string, n int) []int64 {
	t.Helper()
	j := openTestJournal(t, dir, 1<<20, raft.NewInmemStore())
	var offs []int64
	for i := 0; i < n; i++ {
		offs = append(offs, j.tail)
		mustStore(t, j, journalLogs(uint64(2*i+1), 2, 1))
	}
	offs = append(offs, j.tail)
	crash(j)
	return offs
}

// copyDir copies the journal in src to a new directory.
func copyJournal(t *testing.T, src string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(src, JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	if err := os.WriteFile(filepath.Join(dst, JournalFile), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestFaultFlippedByteAnywhere: a byte flipped anywhere in a journal's
// records is either in the last record, which is cut with everything
// before it kept, or in an earlier one, which is refused naming that
// record's offset. Never fewer entries without a word.
func TestFaultFlippedByteAnywhere(t *testing.T) {
	const records = 6
	src := t.TempDir()
	offs := writeRecords(t, src, records)
	for off := offs[0]; off < offs[records]; off += 5 {
		rec := 0
		for offs[rec+1] <= off {
			rec++
		}
		dir := copyJournal(t, src)
		path := filepath.Join(dir, JournalFile)
		flipByte(t, path, off)
		inner := raft.NewInmemStore()
		j, err := OpenJournal(path, 1<<20, inner, nil, nil)
		if rec == records-1 {
			if err != nil {
				t.Fatalf("flip at %d (last record): %v", off, err)
			}
			checkLog(t, j, 1, 2*(records-1), 1)
			_ = j.Close()
			continue
		}
		if err == nil {
			last, _ := j.LastIndex()
			_ = j.Close()
			t.Fatalf("flip at %d (record %d of %d) opened with the log ending at %d", off, rec+1, records, last)
		}
		wantCorrupt(t, err, path, offs[rec])
	}
}

// TestFaultTornLastRecord: the last record cut anywhere (a crash during
// its write: its tail still zeros) is cut on open; the log goes on from
// the record before it.
func TestFaultTornLastRecord(t *testing.T) {
	const records = 4
	src := t.TempDir()
	offs := writeRecords(t, src, records)
	last := offs[records-1]
	raw, err := os.ReadFile(filepath.Join(src, JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	for keep := int64(1); last+keep < offs[records]; keep += 3 {
		if !slices.ContainsFunc(raw[last+keep:offs[records]], func(b byte) bool { return b != 0 }) {
			continue // the record's end is zeros already: nothing torn
		}
		dir := copyJournal(t, src)
		f, err := os.OpenFile(filepath.Join(dir, JournalFile), os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt(make([]byte, offs[records]-last-keep), last+keep); err != nil {
			t.Fatal(err)
		}
		f.Close()
		j := openTestJournal(t, dir, 1<<20, raft.NewInmemStore())
		checkLog(t, j, 1, 2*(records-1), 1)
		mustStore(t, j, journalLogs(2*(records-1)+1, 1, 1))
		_ = j.Close()
	}
}
