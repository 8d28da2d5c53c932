package storage

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// openTestJournal opens a journal in dir over inner that never flushes on
// its own, so entries stay in the journal until a test says otherwise.
func openTestJournal(t *testing.T, dir string, size int64, inner raft.LogStore) *Journal {
	t.Helper()
	j, err := OpenJournal(filepath.Join(dir, "raft.journal"), size, inner, func(err error) { t.Errorf("flush failed: %v", err) }, nil)
	if err != nil {
		t.Fatalf("open journal: %v", err)
	}
	j.delay.Store(int64(time.Hour))
	return j
}

// crash abandons j as a killed process would: nothing pending is flushed.
func crash(j *Journal) {
	close(j.stop)
	<-j.done
	j.f.Close()
}

func journalLogs(first, n uint64, term uint64) []*raft.Log {
	logs := make([]*raft.Log, n)
	for i := range logs {
		idx := first + uint64(i)
		logs[i] = &raft.Log{Index: idx, Term: term, Type: raft.LogCommand, Data: []byte(fmt.Sprintf("entry %d term %d", idx, term))}
	}
	return logs
}

func mustStore(t *testing.T, s raft.LogStore, logs []*raft.Log) {
	t.Helper()
	if err := s.StoreLogs(logs); err != nil {
		t.Fatalf("store %d..%d: %v", logs[0].Index, logs[len(logs)-1].Index, err)
	}
}

// checkLog asserts s holds exactly entries first..last of the given term.
func checkLog(t *testing.T, s raft.LogStore, first, last, term uint64) {
	t.Helper()
	f, _ := s.FirstIndex()
	l, _ := s.LastIndex()
	if f != first || l != last {
		t.Fatalf("log holds %d..%d, want %d..%d", f, l, first, last)
	}
	for idx := first; idx <= last; idx++ {
		var out raft.Log
		if err := s.GetLog(idx, &out); err != nil {
			t.Fatalf("entry %d: %v", idx, err)
		}
		if want := fmt.Sprintf("entry %d term %d", idx, term); string(out.Data) != want || out.Index != idx {
			t.Fatalf("entry %d: %q, want %q", idx, out.Data, want)
		}
	}
}

// checkTerms asserts entries first..last are in s with the given term.
func checkTerms(t *testing.T, s raft.LogStore, first, last, term uint64) {
	t.Helper()
	for idx := first; idx <= last; idx++ {
		var out raft.Log
		if err := s.GetLog(idx, &out); err != nil || out.Term != term {
			t.Fatalf("entry %d: term %d, %v; want term %d", idx, out.Term, err, term)
		}
	}
}

// TestJournalReplaysAfterCrash: entries acknowledged by StoreLogs are in
// the bolt log after a crash that left them only in the journal.
func TestJournalReplaysAfterCrash(t *testing.T) {
	dir, inner := t.TempDir(), raft.NewInmemStore()
	j := openTestJournal(t, dir, 1<<20, inner)
	mustStore(t, j, journalLogs(1, 3, 1))
	mustStore(t, j, journalLogs(4, 5, 1))
	checkLog(t, j, 1, 8, 1) // read from memory
	if last, _ := inner.LastIndex(); last != 0 {
		t.Fatalf("inner has entries up to %d before any flush", last)
	}
	crash(j)

	j = openTestJournal(t, dir, 1<<20, inner)
	defer j.Close()
	checkLog(t, inner, 1, 8, 1)
	checkLog(t, j, 1, 8, 1)
	mustStore(t, j, journalLogs(9, 2, 1))
	if err := j.flush(); err != nil {
		t.Fatal(err)
	}
	checkLog(t, inner, 1, 10, 1)
}

// TestJournalTornTail: a record cut short by a crash (it was never
// acknowledged) is dropped, and the ones before it are kept.
func TestJournalTornTail(t *testing.T) {
	dir, inner := t.TempDir(), raft.NewInmemStore()
	j := openTestJournal(t, dir, 1<<20, inner)
	mustStore(t, j, journalLogs(1, 2, 1))
	mustStore(t, j, journalLogs(3, 2, 1))
	tornAt := j.tail - 3
	crash(j)
	f, err := os.OpenFile(filepath.Join(dir, "raft.journal"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0xff, 0xee, 0xdd}, tornAt); err != nil {
		t.Fatal(err)
	}
	f.Close()

	j = openTestJournal(t, dir, 1<<20, inner)
	defer j.Close()
	checkLog(t, inner, 1, 2, 1)
	checkLog(t, j, 1, 2, 1)
	mustStore(t, j, journalLogs(3, 1, 1)) // the log continues after the torn record
	checkLog(t, j, 1, 3, 1)
}

// TestJournalWraps: a small journal wraps many times; every entry ends up
// in inner, across a crash and with clean closes.
func TestJournalWraps(t *testing.T) {
	dir, inner := t.TempDir(), raft.NewInmemStore()
	const size = journalHeaderSize + 2048
	j := openTestJournal(t, dir, size, inner)
	next := uint64(1)
	for i := 0; i < 60; i++ {
		mustStore(t, j, journalLogs(next, 7, 1))
		next += 7
	}
	if j.gen < 5 {
		t.Fatalf("generation %d after 60 records in a small journal: it did not wrap", j.gen)
	}
	checkLog(t, j, 1, next-1, 1)
	crash(j)
	j = openTestJournal(t, dir, size, inner)
	checkLog(t, inner, 1, next-1, 1)
	mustStore(t, j, journalLogs(next, 3, 1))
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	checkLog(t, inner, 1, next+2, 1)
}

// TestJournalTruncationStaysTruncated: a follower's conflicting suffix,
// removed by Raft, does not come back from the journal after a crash.
func TestJournalTruncationStaysTruncated(t *testing.T) {
	dir, inner := t.TempDir(), raft.NewInmemStore()
	j := openTestJournal(t, dir, 1<<20, inner)
	mustStore(t, j, journalLogs(1, 10, 1))
	if err := j.DeleteRange(6, 10); err != nil {
		t.Fatal(err)
	}
	checkLog(t, j, 1, 5, 1)
	mustStore(t, j, journalLogs(6, 2, 2)) // the new leader's entries
	crash(j)

	j = openTestJournal(t, dir, 1<<20, inner)
	defer j.Close()
	checkTerms(t, inner, 1, 5, 1) // the old leader's
	checkTerms(t, inner, 6, 7, 2) // the new leader's
	if last, _ := inner.LastIndex(); last != 7 {
		t.Fatalf("log ends at %d, want 7", last)
	}
}

// TestJournalCompactionKeepsTail: deleting old entries (a compaction)
// keeps the entries above them, in memory and after a crash.
func TestJournalCompactionKeepsTail(t *testing.T) {
	dir, inner := t.TempDir(), raft.NewInmemStore()
	j := openTestJournal(t, dir, 1<<20, inner)
	mustStore(t, j, journalLogs(1, 10, 1))
	if err := j.DeleteRange(1, 4); err != nil {
		t.Fatal(err)
	}
	mustStore(t, j, journalLogs(11, 2, 1))
	checkLog(t, j, 5, 12, 1)
	crash(j)
	j = openTestJournal(t, dir, 1<<20, inner)
	defer j.Close()
	checkLog(t, inner, 5, 12, 1)
}

// TestJournalLargeBatchBypasses: a batch larger than half the journal goes
// straight to inner, after what was pending.
func TestJournalLargeBatchBypasses(t *testing.T) {
	dir, inner := t.TempDir(), raft.NewInmemStore()
	j := openTestJournal(t, dir, journalHeaderSize+1024, inner)
	defer func() { j.Close() }()
	mustStore(t, j, journalLogs(1, 2, 1))
	big := journalLogs(3, 1, 1)
	big[0].Data = make([]byte, 4096)
	mustStore(t, j, big)
	if last, _ := inner.LastIndex(); last != 3 {
		t.Fatalf("inner ends at %d, want 3", last)
	}
	mustStore(t, j, journalLogs(4, 1, 1))
	if last, _ := j.LastIndex(); last != 4 {
		t.Fatalf("log ends at %d, want 4", last)
	}
	crash(j)
	j = openTestJournal(t, dir, journalHeaderSize+1024, inner)
	if last, _ := inner.LastIndex(); last != 4 {
		t.Fatalf("after a crash the log ends at %d, want 4", last)
	}
}

// TestJournalTornHeader: a header write cut short (a crash while a new
// generation starts) falls back to the previous generation, whose entries
// are all in inner by then.
func TestJournalTornHeader(t *testing.T) {
	dir, inner := t.TempDir(), raft.NewInmemStore()
	j := openTestJournal(t, dir, 1<<20, inner)
	mustStore(t, j, journalLogs(1, 4, 1))
	if err := j.flush(); err != nil {
		t.Fatal(err)
	}
	gen := j.gen
	if err := j.begin(false); err != nil {
		t.Fatal(err)
	}
	crash(j)
	f, err := os.OpenFile(filepath.Join(dir, "raft.journal"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0xff}, int64((gen+1)%2)*journalSlotSize+15); err != nil {
		t.Fatal(err)
	}
	f.Close()
	j = openTestJournal(t, dir, 1<<20, inner)
	defer j.Close()
	checkLog(t, j, 1, 4, 1)
	if j.gen != gen+1 {
		t.Fatalf("generation %d, want %d", j.gen, gen+1)
	}
	mustStore(t, j, journalLogs(5, 1, 1))
	checkLog(t, j, 1, 5, 1)
}

// TestJournalFlusherStoresInBackground: without any flush asked for,
// entries reach inner within the flush delay.
func TestJournalFlusherStoresInBackground(t *testing.T) {
	dir, inner := t.TempDir(), raft.NewInmemStore()
	j, err := OpenJournal(filepath.Join(dir, "raft.journal"), 1<<20, inner, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	mustStore(t, j, journalLogs(1, 3, 1))
	waitInnerLast(t, inner, 3, "entries never reached inner")
	j.mu.Lock()
	pending := len(j.pending)
	j.mu.Unlock()
	if pending != 0 {
		t.Fatalf("%d entries still pending after the flush", pending)
	}
}

// TestJournalFlushesEarlyWhenManyPending: below flushAt entries wait for
// the delay; reaching it starts the flush at once.
func TestJournalFlushesEarlyWhenManyPending(t *testing.T) {
	dir, inner := t.TempDir(), raft.NewInmemStore()
	j := openTestJournal(t, dir, 1<<20, inner) // delay: an hour
	defer j.Close()
	j.flushAt = 10
	mustStore(t, j, journalLogs(1, 6, 1))
	time.Sleep(50 * time.Millisecond)
	if last, _ := inner.LastIndex(); last != 0 {
		t.Fatalf("6 of 10 entries flushed before the delay: inner's last is %d", last)
	}
	mustStore(t, j, journalLogs(7, 4, 1))
	waitInnerLast(t, inner, 10, "10 pending entries did not start a flush")
}

// waitInnerLast waits up to 10 s for the flusher to bring inner's last
// index to want, and fails with why otherwise.
func waitInnerLast(t *testing.T, inner raft.LogStore, want uint64, why string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if last, _ := inner.LastIndex(); last == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(why)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// blockingDeletes holds every DeleteRange until release is closed.
type blockingDeletes struct {
	*raft.InmemStore
	entered chan struct{}
	release chan struct{}
}

func (b *blockingDeletes) DeleteRange(lo, hi uint64) error {
	b.entered <- struct{}{}
	<-b.release
	return b.InmemStore.DeleteRange(lo, hi)
}

// TestJournalAppendsDuringCompaction: a compaction of old entries does not
// hold up appends (Raft compacts after every snapshot).
func TestJournalAppendsDuringCompaction(t *testing.T) {
	inner := &blockingDeletes{InmemStore: raft.NewInmemStore(), entered: make(chan struct{}), release: make(chan struct{})}
	j := openTestJournal(t, t.TempDir(), 1<<20, inner)
	defer j.Close()
	mustStore(t, j, journalLogs(1, 10, 1))
	deleted := make(chan error, 1)
	go func() { deleted <- j.DeleteRange(1, 5) }()
	<-inner.entered
	stored := make(chan error, 1)
	go func() { stored <- j.StoreLogs(journalLogs(11, 2, 1)) }()
	select {
	case err := <-stored:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("an append waited for a compaction")
	}
	close(inner.release)
	if err := <-deleted; err != nil {
		t.Fatal(err)
	}
	checkLog(t, j, 6, 12, 1)
}

// TestJournalCompactionBelowInnerLeavesPendingAlone: compacting entries
// inner already holds neither stores the pending entries first nor waits
// for appends (Raft compacts after every snapshot, during the load).
func TestJournalCompactionBelowInnerLeavesPendingAlone(t *testing.T) {
	dir, inner := t.TempDir(), raft.NewInmemStore()
	j := openTestJournal(t, dir, 1<<20, inner)
	defer func() { j.Close() }()
	mustStore(t, j, journalLogs(1, 10, 1))
	if err := j.flush(); err != nil {
		t.Fatal(err)
	}
	mustStore(t, j, journalLogs(11, 5, 1))
	j.writeMu.Lock() // an append in progress
	deleted := make(chan error, 1)
	go func() { deleted <- j.DeleteRange(1, 6) }()
	select {
	case err := <-deleted:
		j.writeMu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		j.writeMu.Unlock()
		t.Fatal("a compaction of stored entries waited for an append")
	}
	if last, _ := inner.LastIndex(); last != 10 {
		t.Fatalf("the compaction stored pending entries: inner's last is %d, want 10", last)
	}
	checkLog(t, j, 7, 15, 1)
	crash(j)
	j = openTestJournal(t, dir, 1<<20, inner)
	checkLog(t, inner, 7, 15, 1)
}

// storeUntilWrap appends 7-entry batches from next until the journal
// starts a new generation, and returns the next index.
func storeUntilWrap(t *testing.T, j *Journal, next uint64) uint64 {
	t.Helper()
	gen := j.gen
	for j.gen == gen {
		mustStore(t, j, journalLogs(next, 7, 1))
		next += 7
	}
	return next
}

// TestJournalWrapStoresNothing: a wrap to the other half stores nothing
// into inner (it used to store every pending entry first, holding up
// appends for a bolt transaction), and a crash after it loses nothing.
func TestJournalWrapStoresNothing(t *testing.T) {
	dir, inner := t.TempDir(), raft.NewInmemStore()
	const size = journalHeaderSize + 2048
	j := openTestJournal(t, dir, size, inner) // the flusher waits an hour
	next := storeUntilWrap(t, j, 1)
	if last, _ := inner.LastIndex(); last != 0 {
		t.Fatalf("the wrap stored entries into inner: its last is %d", last)
	}
	checkLog(t, j, 1, next-1, 1)
	crash(j)
	j = openTestJournal(t, dir, size, inner)
	defer j.Close()
	checkLog(t, inner, 1, next-1, 1)
}

// TestJournalCrashRightAfterWrap: a crash after the new generation's
// header and before its first record replays the previous generation.
func TestJournalCrashRightAfterWrap(t *testing.T) {
	dir, inner := t.TempDir(), raft.NewInmemStore()
	j := openTestJournal(t, dir, journalHeaderSize+2048, inner)
	mustStore(t, j, journalLogs(1, 5, 1))
	if err := j.wrap(); err != nil {
		t.Fatal(err)
	}
	crash(j)
	j = openTestJournal(t, dir, journalHeaderSize+2048, inner)
	defer j.Close()
	checkLog(t, inner, 1, 5, 1)
}

// TestJournalSecondWrapStoresTheFirst: the wrap that returns to a half
// first stores what is pending if the flusher has not stored the
// generation that half holds.
func TestJournalSecondWrapStoresTheFirst(t *testing.T) {
	dir, inner := t.TempDir(), raft.NewInmemStore()
	const size = journalHeaderSize + 2048
	j := openTestJournal(t, dir, size, inner) // the flusher waits an hour
	next := storeUntilWrap(t, j, 1)
	if last, _ := inner.LastIndex(); last != 0 {
		t.Fatalf("the first wrap stored entries into inner: its last is %d", last)
	}
	next = storeUntilWrap(t, j, next)
	// The batch that wrapped went to the new generation, after the store.
	if last, _ := inner.LastIndex(); last != next-8 {
		t.Fatalf("after the second wrap inner ends at %d, want %d", last, next-8)
	}
	mustStore(t, j, journalLogs(next, 2, 1))
	crash(j)
	j = openTestJournal(t, dir, size, inner)
	defer j.Close()
	checkLog(t, inner, 1, next+1, 1)
}

// TestJournalOpensVersion1: a journal written before halves (version 1
// header, records over the whole file) is replayed on open.
func TestJournalOpensVersion1(t *testing.T) {
	dir, inner := t.TempDir(), raft.NewInmemStore()
	path := filepath.Join(dir, "raft.journal")
	const gen, size = 7, journalHeaderSize + 4096
	file := make([]byte, size)
	slot := file[gen%2*journalSlotSize:]
	copy(slot, journalMagicV1[:])
	binary.BigEndian.PutUint64(slot[8:16], gen)
	binary.BigEndian.PutUint32(slot[16:20], crc32.Checksum(slot[:16], crcTable))
	off := journalHeaderSize
	for _, batch := range [][]*raft.Log{journalLogs(1, 3, 1), journalLogs(4, 2, 1)} {
		rec := appendJournalRecord(nil, batch)
		sealJournalRecord(rec, gen)
		off += copy(file[off:], rec)
	}
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	j := openTestJournal(t, dir, size, inner)
	defer j.Close()
	checkLog(t, inner, 1, 5, 1)
	mustStore(t, j, journalLogs(6, 1, 1))
	checkLog(t, j, 1, 6, 1)
}

// FuzzJournalRecovery: whatever follows a valid header in the journal file
// (torn, stale or corrupt records), opening it never panics, and what it
// replays into an empty log is consecutive from the first entry.
func FuzzJournalRecovery(f *testing.F) {
	dir := f.TempDir()
	j, err := OpenJournal(filepath.Join(dir, "seed"), journalHeaderSize+4096, raft.NewInmemStore(), nil, nil)
	if err != nil {
		f.Fatal(err)
	}
	j.delay.Store(int64(time.Hour))
	if err := j.StoreLogs(journalLogs(1, 3, 1)); err != nil {
		f.Fatal(err)
	}
	if err := j.StoreLogs(journalLogs(4, 2, 1)); err != nil {
		f.Fatal(err)
	}
	gen := j.gen
	seed := make([]byte, j.tail-j.start)
	if _, err := j.f.ReadAt(seed, j.start); err != nil {
		f.Fatal(err)
	}
	crash(j)
	f.Add(seed)
	f.Add(seed[:len(seed)-5])
	f.Add([]byte{0, 0, 0, 9, 1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 2, 1})
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) > 4096 {
			body = body[:4096]
		}
		path := filepath.Join(t.TempDir(), "raft.journal")
		j, err := OpenJournal(path, journalHeaderSize+4096, raft.NewInmemStore(), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		crash(j)
		file, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		// The seed records were written in generation gen; make it current.
		for j.gen < gen {
			j.f = osFile{file}
			if err := j.begin(false); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := file.WriteAt(body, j.start); err != nil {
			t.Fatal(err)
		}
		file.Close()
		inner := raft.NewInmemStore()
		j, err = OpenJournal(path, journalHeaderSize+4096, inner, nil, nil)
		if err != nil {
			return // refused (entries out of order): no panic
		}
		defer j.Close()
		first, _ := inner.FirstIndex()
		last, _ := inner.LastIndex()
		if string(body) == string(seed) && (first != 1 || last != 5) {
			t.Fatalf("the intact records replayed as %d..%d, want 1..5", first, last)
		}
		for idx := first; last != 0 && idx <= last; idx++ {
			var l raft.Log
			if err := inner.GetLog(idx, &l); err != nil {
				t.Fatalf("replayed log %d..%d lacks %d", first, last, idx)
			}
		}
	})
}

// TestJournalNoSync: with forceSync=no appends are not synced; with the
// default each append is synced once.
func TestJournalNoSync(t *testing.T) {
	for _, noSync := range []bool{false, true} {
		j := openTestJournal(t, t.TempDir(), 1<<20, raft.NewInmemStore())
		j.NoSync = noSync
		before := j.Syncs.Load()
		for i := uint64(0); i < 50; i++ {
			mustStore(t, j, journalLogs(1+i*4, 4, 1))
		}
		got := j.Syncs.Load() - before
		if want := map[bool]int64{false: 50, true: 0}[noSync]; got != want {
			t.Errorf("noSync=%v: %d syncs for 50 appends, want %d", noSync, got, want)
		}
		checkLog(t, j, 1, 200, 1)
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// batchRecorder records the size of each StoreLogs batch.
type batchRecorder struct {
	raft.LogStore
	batches []int
}

func (r *batchRecorder) StoreLogs(logs []*raft.Log) error {
	r.batches = append(r.batches, len(logs))
	return r.LogStore.StoreLogs(logs)
}

// TestJournalStoresLargeEntriesInChunks: entries go into the store behind
// the journal in transactions of about journalFlushBytes, whether they
// are flushed from the journal or bypass it, so one transaction never
// holds hundreds of megabytes.
func TestJournalStoresLargeEntriesInChunks(t *testing.T) {
	const mb = 1 << 20
	big := func(first, n uint64) []*raft.Log {
		logs := journalLogs(first, n, 1)
		for _, l := range logs {
			l.Data = append(l.Data, make([]byte, 6*mb)...)
		}
		return logs
	}
	inner := &batchRecorder{LogStore: raft.NewInmemStore()}
	j := openTestJournal(t, t.TempDir(), 64*mb, inner)
	defer j.Close()
	mustStore(t, j, big(1, 2))
	mustStore(t, j, big(3, 3)) // 5 pending, 30 MB
	if err := j.flush(); err != nil {
		t.Fatal(err)
	}
	mustStore(t, j, big(6, 7)) // 42 MB: above half the journal, bypasses it
	for i, n := range inner.batches {
		if n > 2 {
			t.Errorf("batch %d stored %d entries of 6 MB at once (batches %v)", i, n, inner.batches)
		}
	}
	if len(inner.batches) < 7 {
		t.Errorf("batches %v: the 12 entries were not split", inner.batches)
	}
	var out raft.Log
	for idx := uint64(1); idx <= 12; idx++ {
		if err := j.GetLog(idx, &out); err != nil || out.Index != idx {
			t.Fatalf("entry %d: %v", idx, err)
		}
	}
}
