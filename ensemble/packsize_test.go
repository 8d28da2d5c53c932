package ensemble

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"
)

// TestPackedLogFileStaysNearItsLiveSize: a log of large entries that is
// appended and compacted over and over (100 KB values under a small
// snapSizeLimitInKb) reuses bolt's freed pages instead of growing the file.
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
	store, err := newPackedLogStore(chunkedLogStore{b})
	if err != nil {
		t.Fatal(err)
	}
	p := &packTestStore{t: t, path: path, bolt: b, store: store}
	const value, batch, keep, rounds = 100 << 10, 80, 130, 60
	data := make([]byte, value)
	next := uint64(1)
	for range rounds {
		logs := make([]*raft.Log, batch)
		for i := range logs {
			logs[i] = &raft.Log{Index: next, Term: 1, Type: raft.LogCommand, Data: data}
			next++
		}
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
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	live := int64((keep + batch) * value)
	if st.Size() > live*9/4 {
		t.Fatalf("raft.db %d MB for at most %d MB of live log", st.Size()>>20, live>>20)
	}
	t.Logf("raft.db %d MB, live log at most %d MB", st.Size()>>20, live>>20)
}
