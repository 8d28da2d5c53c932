package storage

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"
)

// TestPackedLogFileStaysNearItsLiveSize: a log of large entries that is
// appended and compacted over and over (100 KB values under a small
// snapSizeLimitInKb) reuses bolt's freed pages instead of growing the file
// (bolt's high-water mark: since bbolt v1.3.7 the file itself is grown
// ahead of it, by up to 16 MiB).
// Each pack is one bolt value of contiguous overflow pages; with 4 MiB
// packs this loop left a 54 MB file for at most 20 MB of live log (1 MiB:
// 33 MB, and 37 MB after 400 rounds), and a 3-member ensemble under 100 KB
// setData with snapSizeLimitInKb=8192 raft.db files of 67-92 MB (1 MiB:
// 33-45 MB).
func TestPackedLogFileStaysNearItsLiveSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "raft.db")
	b, err := raftboltdb.New(raftboltdb.Options{Path: path, BoltOptions: &bbolt.Options{NoFreelistSync: true, FreelistType: bbolt.FreelistMapType}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	store, err := NewPackedLogStore(ChunkedLogStore{b})
	if err != nil {
		t.Fatal(err)
	}
	p := &packTestStore{t: t, path: path, bolt: b, store: store}
	const value, batch, keep, rounds = 100 << 10, 80, 130, 60
	data := make([]byte, value)
	next := uint64(1)
	for range rounds {
		logs := sameEntries(&next, batch, data)
		if err := p.store.StoreLogs(logs); err != nil {
			t.Fatal(err)
		}
		first, _ := p.store.FirstIndex()
		if last := next - 1; last-first+1 > keep {
			if err := p.store.DeleteRange(first, last-keep); err != nil {
				t.Fatal(err)
			}
		}
	}
	// What bolt uses: the pages below its high-water mark. The file may
	// be longer, by the (sparse) room bolt grows it by ahead of use.
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	m, ok := newestBoltMeta(f, st.Size())
	if !ok {
		t.Fatal("no valid meta page")
	}
	used := int64(m.pgid) * int64(m.pageSize)
	live := int64((keep + batch) * value)
	if used > live*9/4 {
		t.Fatalf("raft.db uses %d MB for at most %d MB of live log", used>>20, live>>20)
	}
	t.Logf("raft.db uses %d MB (the file is %d MB), live log at most %d MB", used>>20, st.Size()>>20, live>>20)
}

// discardStore takes records and keeps only the last index.
type discardStore struct {
	raft.LogStore
	last uint64
}

func (d *discardStore) LastIndex() (uint64, error) { return d.last, nil }
func (d *discardStore) StoreLogs(logs []*raft.Log) error {
	d.last = logs[len(logs)-1].Index
	return nil
}

// TestPackedStoreReusesItsBuffer: a flush of large values (16 MB of 10 KB
// entries, many packs) is encoded into the buffer the last one used,
// sized once, instead of a buffer grown (and copied) pack by pack and
// dropped afterwards; that was a fifth of a leader's CPU under 10 KB
// setData.
func TestPackedStoreReusesItsBuffer(t *testing.T) {
	s, err := NewPackedLogStore(&discardStore{LogStore: raft.NewInmemStore()})
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 10<<10)
	next := uint64(1)
	flush := func() {
		logs := sameEntries(&next, 1600, data)
		if err := s.StoreLogs(logs); err != nil {
			t.Fatal(err)
		}
	}
	flush()
	if per := allocatedPerCall(4, flush); per > 1<<20 {
		t.Fatalf("a 16 MB flush allocated %d KB", per>>10)
	}
}

// TestJournalReusesItsBuffer: an append of a few megabytes (a Raft batch
// of 10 KB values) is encoded into the journal's kept buffer, not a fresh
// one each time (it kept only buffers up to 1 MB).
func TestJournalReusesItsBuffer(t *testing.T) {
	j, err := OpenJournal(filepath.Join(t.TempDir(), "raft.journal"), 64<<20, &discardStore{LogStore: raft.NewInmemStore()}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	j.NoSync = true
	data := make([]byte, 10<<10)
	next := uint64(1)
	appendBatch := func() {
		logs := sameEntries(&next, 256, data)
		if err := j.StoreLogs(logs); err != nil {
			t.Fatal(err)
		}
	}
	appendBatch()
	if per := allocatedPerCall(4, appendBatch); per > 512<<10 {
		t.Fatalf("a 2.5 MB append allocated %d KB", per>>10)
	}
}

// allocatedPerCall is the bytes the process allocated per call of f, over
// n calls.
func allocatedPerCall(n int, f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		f()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / uint64(n)
}

// sameEntries returns n commands carrying data, indexed from *next on, and
// advances *next past them.
func sameEntries(next *uint64, n int, data []byte) []*raft.Log {
	logs := make([]*raft.Log, n)
	for i := range logs {
		logs[i] = &raft.Log{Index: *next, Term: 1, Type: raft.LogCommand, Data: data}
		*next++
	}
	return logs
}
