package storage

import (
	"encoding/binary"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"
)

// writeRaftDB fills a raft.db with enough log to span many pages.
func writeRaftDB(t *testing.T, path string) {
	t.Helper()
	p := openPackTestStore(t, path)
	for i := uint64(0); i < 20; i++ {
		logs := sizedLogs(i*100+1, 100, 1000)
		if err := p.store.StoreLogs(logs); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.bolt.SetUint64([]byte("CurrentTerm"), 3); err != nil {
		t.Fatal(err)
	}
	if err := p.bolt.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCheckBoltFileRefusesATruncatedRaftDB: a raft.db cut short is
// refused naming the file and where it ends; a whole one, a missing one
// and an empty one pass.
func TestCheckBoltFileRefusesATruncatedRaftDB(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "raft.db")
	if err := CheckBoltFile(path); err != nil {
		t.Fatalf("missing file: %v", err)
	}
	writeRaftDB(t, path)
	if err := CheckBoltFile(path); err != nil {
		t.Fatalf("whole file: %v", err)
	}
	st, _ := os.Stat(path)
	cut := st.Size() / 2 &^ 4095
	if err := os.Truncate(path, cut); err != nil {
		t.Fatal(err)
	}
	wantCorrupt(t, CheckBoltFile(path), path, cut)
	if err := os.Truncate(path, 100); err != nil { // the first meta page only
		t.Fatal(err)
	}
	wantCorrupt(t, CheckBoltFile(path), path, 100)
	if err := os.Truncate(path, 50); err != nil { // no meta page at all
		t.Fatal(err)
	}
	wantCorrupt(t, CheckBoltFile(path), path, 0)
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	if err := CheckBoltFile(path); err != nil {
		t.Fatalf("empty file: %v", err)
	}
}

// TestOpenTruncatedRaftDB opens a truncated raft.db the way a member does
// (checked first, then bolt, then every entry read) in a child process:
// a crash there (SIGBUS, as bolt maps pages the file lacks) fails the
// test, a refusal naming the file passes.
func TestOpenTruncatedRaftDB(t *testing.T) {
	if path := os.Getenv("STORAGE_TEST_OPEN_RAFTDB"); path != "" {
		if err := CheckBoltFile(path); err != nil {
			os.Stdout.WriteString("refused: " + err.Error() + "\n")
			os.Exit(0)
		}
		b, err := raftboltdb.NewBoltStore(path)
		if err != nil {
			os.Stdout.WriteString("refused: " + err.Error() + "\n")
			os.Exit(0)
		}
		s, err := NewPackedLogStore(ChunkedLogStore{b})
		if err == nil {
			last, _ := s.LastIndex()
			for i := uint64(1); i <= last && err == nil; i++ {
				var l raft.Log
				err = s.GetLog(i, &l)
			}
		}
		if err != nil {
			os.Stdout.WriteString("refused: " + err.Error() + "\n")
			os.Exit(0)
		}
		os.Stdout.WriteString("opened\n")
		os.Exit(0)
	}
	path := filepath.Join(t.TempDir(), "raft.db")
	writeRaftDB(t, path)
	st, _ := os.Stat(path)
	if err := os.Truncate(path, st.Size()/2&^4095); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestOpenTruncatedRaftDB$")
	cmd.Env = append(os.Environ(), "STORAGE_TEST_OPEN_RAFTDB="+path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("opening a truncated raft.db crashed the process: %v\n%s", err, firstLines(string(out), 8))
	}
	if !strings.Contains(string(out), "refused: ") || !strings.Contains(string(out), path) {
		t.Fatalf("a truncated raft.db was not refused naming it:\n%s", firstLines(string(out), 8))
	}
}

// firstLines is the first n lines of s.
func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

// TestCheckBoltFileReadsTheOtherMetaPage: with the first meta page
// damaged, bolt opens the file by the second (bbolt looks for it at
// 1 KiB, 2 KiB, … when the first gives no page size), and so does
// CheckBoltFile: the whole file passes and opens, a truncated one is
// refused by the second page's size, and with both damaged it is refused.
func TestCheckBoltFileReadsTheOtherMetaPage(t *testing.T) {
	path, f := openRaftDBForDamage(t)
	damage := func(off int64) {
		t.Helper()
		b := make([]byte, 1)
		if _, err := f.ReadAt(b, off); err != nil {
			t.Fatal(err)
		}
		b[0] ^= 0xff
		if _, err := f.WriteAt(b, off); err != nil {
			t.Fatal(err)
		}
	}
	damage(boltPageHeader + 60) // meta page 0's checksum
	if err := CheckBoltFile(path); err != nil {
		t.Fatalf("meta page 0 damaged, page 1 whole: %v", err)
	}
	b, err := raftboltdb.New(raftboltdb.Options{Path: path, BoltOptions: &bbolt.Options{ReadOnly: true, Timeout: time.Second}})
	if err != nil {
		t.Fatalf("bolt does not open it by meta page 1: %v", err)
	}
	if term, err := b.GetUint64([]byte("CurrentTerm")); err != nil || term != 3 {
		t.Fatalf("CurrentTerm %d, %v", term, err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	// Read-only, the open above wrote nothing: page 0 is still damaged.
	if m, ok := readBoltMeta(f, 0); ok {
		t.Fatalf("meta page 0 reads as valid after the open: %+v", m)
	}
	st, _ := os.Stat(path)
	cut := st.Size() / 2 &^ 4095
	if err := os.Truncate(path, cut); err != nil {
		t.Fatal(err)
	}
	wantCorrupt(t, CheckBoltFile(path), path, cut)
	damage(4096 + boltPageHeader + 60) // and meta page 1's
	wantCorrupt(t, CheckBoltFile(path), path, 0)
}

// TestCheckBoltFileRefusesAnOverflowingPageCount: a meta page (checksum
// valid) whose page count times its page size overflows int64 wrapped to
// 0 bytes, and CheckBoltFile let a truncated file through to bolt, which
// crashed the process (SIGBUS) reading the pages it lacks. It is refused
// now, naming the file and where it ends.
func TestCheckBoltFileRefusesAnOverflowingPageCount(t *testing.T) {
	path, f := openRaftDBForDamage(t)
	m, ok := readBoltMeta(f, 0)
	if !ok || m.pageSize != 4096 {
		t.Fatalf("meta page 0: %+v %v, want a valid one of 4096-byte pages", m, ok)
	}
	for _, off := range []int64{0, int64(m.pageSize)} {
		setBoltPageCount(t, f, off, 1<<52) // 2^52 pages of 2^12 bytes: 2^64, 0 in int64
	}
	st, _ := f.Stat()
	cut := st.Size() / 2 &^ 4095
	if err := os.Truncate(path, cut); err != nil {
		t.Fatal(err)
	}
	wantCorrupt(t, CheckBoltFile(path), path, cut)
}

// setBoltPageCount rewrites the page count (pgid) of the meta page at off
// and its checksum, as bolt would have written them.
func setBoltPageCount(t *testing.T, f *os.File, off int64, pgid uint64) {
	t.Helper()
	b := make([]byte, boltMetaLen)
	if _, err := f.ReadAt(b, off+boltPageHeader); err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint64(b[40:48], pgid)
	h := fnv.New64a()
	_, _ = h.Write(b[:56])
	binary.LittleEndian.PutUint64(b[56:64], h.Sum64())
	if _, err := f.WriteAt(b, off+boltPageHeader); err != nil {
		t.Fatal(err)
	}
	if m, ok := readBoltMeta(f, off); !ok || m.pgid != pgid {
		t.Fatalf("meta page at %d after the rewrite: %+v %v", off, m, ok)
	}
}

// openRaftDBForDamage writes a raft.db in a temporary directory and opens
// it for writing, closed when the test ends.
func openRaftDBForDamage(t *testing.T) (string, *os.File) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "raft.db")
	writeRaftDB(t, path)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return path, f
}
