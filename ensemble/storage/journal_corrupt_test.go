package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/raft"
)

// flipByte flips every bit of the byte at off in path.
func flipByte(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

// wantCorrupt checks err is a *CorruptError naming path and offset.
func wantCorrupt(t *testing.T, err error, path string, offset int64) {
	t.Helper()
	var ce *CorruptError
	if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("got %v, want a corruption error naming %s", err, path)
	}
	if ce.Path != path || ce.Offset != offset {
		t.Fatalf("corruption reported in %s at %d, want %s at %d", ce.Path, ce.Offset, path, offset)
	}
	if msg := err.Error(); !strings.Contains(msg, path) || (offset >= 0 && !strings.Contains(msg, fmt.Sprint(offset))) {
		t.Fatalf("message %q names neither file nor offset", msg)
	}
}

// TestJournalMidFileDamageRefusesStart: a flipped byte in a record that
// has valid records after it is not a torn tail; opening the journal
// fails naming the file and the record's offset, where the journal used
// to stop at the bad record and drop every acknowledged entry after it.
func TestJournalMidFileDamageRefusesStart(t *testing.T) {
	for _, where := range []struct {
		name string
		at   func(rec int64) int64
	}{
		{"payload", func(rec int64) int64 { return rec + journalRecordHead + 3 }},
		{"checksum", func(rec int64) int64 { return rec + 5 }},
		{"length", func(rec int64) int64 { return rec + 2 }},
		{"generation", func(rec int64) int64 { return rec + 15 }},
	} {
		t.Run(where.name, func(t *testing.T) {
			dir, inner := t.TempDir(), raft.NewInmemStore()
			path := filepath.Join(dir, "raft.journal")
			j := openTestJournal(t, dir, 1<<20, inner)
			mustStore(t, j, journalLogs(1, 2, 1))
			second := j.tail
			mustStore(t, j, journalLogs(3, 2, 1))
			mustStore(t, j, journalLogs(5, 2, 1))
			crash(j)
			flipByte(t, path, where.at(second))

			_, err := OpenJournal(path, 1<<20, inner, nil, nil)
			wantCorrupt(t, err, path, second)
			if last, _ := inner.LastIndex(); last != 0 {
				t.Fatalf("a refused journal replayed up to %d", last)
			}
		})
	}
}

// TestJournalDamagedNewestHeaderRefusesStart: the header of the newest
// generation damaged while that generation holds acknowledged records is
// refused, naming the header's offset, rather than opening the older
// generation's header and dropping the newer records.
func TestJournalDamagedNewestHeaderRefusesStart(t *testing.T) {
	dir, inner := t.TempDir(), raft.NewInmemStore()
	path := filepath.Join(dir, "raft.journal")
	j := openTestJournal(t, dir, 1<<20, inner)
	mustStore(t, j, journalLogs(1, 4, 1))
	gen := j.gen
	crash(j)
	flipByte(t, path, int64(gen%2)*journalSlotSize+12)

	_, err := OpenJournal(path, 1<<20, inner, nil, nil)
	wantCorrupt(t, err, path, int64(gen%2)*journalSlotSize)
}

// TestJournalTornLastRecordIsCut: damage to the last record only (a crash
// during its write) is cut; the records before it are kept and the log
// continues after them.
func TestJournalTornLastRecordIsCut(t *testing.T) {
	dir, inner := t.TempDir(), raft.NewInmemStore()
	path := filepath.Join(dir, "raft.journal")
	j := openTestJournal(t, dir, 1<<20, inner)
	mustStore(t, j, journalLogs(1, 2, 1))
	last := j.tail
	mustStore(t, j, journalLogs(3, 2, 1))
	crash(j)
	flipByte(t, path, last+journalRecordHead+1)

	j = openTestJournal(t, dir, 1<<20, inner)
	defer j.Close()
	checkLog(t, j, 1, 2, 1)
	mustStore(t, j, journalLogs(3, 1, 1))
	checkLog(t, j, 1, 3, 1)
}

// TestJournalZeroedRecordMidFileRefusesStart: a record zeroed whole (a
// lost sector, a hole punched by a broken copy) with records after it
// looks like a generation's end; the records after it make it damage.
func TestJournalZeroedRecordMidFileRefusesStart(t *testing.T) {
	dir, inner := t.TempDir(), raft.NewInmemStore()
	path := filepath.Join(dir, "raft.journal")
	j := openTestJournal(t, dir, 1<<20, inner)
	mustStore(t, j, journalLogs(1, 2, 1))
	second := j.tail
	mustStore(t, j, journalLogs(3, 2, 1))
	third := j.tail
	mustStore(t, j, journalLogs(5, 2, 1))
	crash(j)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(make([]byte, third-second), second); err != nil {
		t.Fatal(err)
	}
	f.Close()

	_, err = OpenJournal(path, 1<<20, inner, nil, nil)
	wantCorrupt(t, err, path, second)
}
