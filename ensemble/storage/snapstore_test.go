package storage

import (
	"io"
	"testing"

	"github.com/hashicorp/raft"
	"go.uber.org/zap"
)

// TestOrderedSnapshotsDropNewerOnes: snapshots written at rising indexes
// are kept (the store keeps two); one written at a lower index than a kept
// one, as a leader's install over a member seeded ahead of the ensemble,
// leaves no snapshot that sorts after it, so a restart restores it.
func TestOrderedSnapshotsDropNewerOnes(t *testing.T) {
	dir := t.TempDir()
	files, err := raft.NewFileSnapshotStore(dir, 2, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	store := &OrderedSnapshots{FileSnapshotStore: files, dir: dir + "/" + SnapshotsDir, log: zap.NewNop()}
	_, trans := raft.NewInmemTransport("")
	write := func(index uint64) {
		t.Helper()
		sink, err := store.Create(raft.SnapshotVersionMax, index, 1, raft.Configuration{}, 1, trans)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sink.Write([]byte("state")); err != nil {
			t.Fatal(err)
		}
		if err := sink.Close(); err != nil {
			t.Fatal(err)
		}
	}
	indexes := func() []uint64 {
		metas, err := store.List()
		if err != nil {
			t.Fatal(err)
		}
		var out []uint64
		for _, m := range metas {
			out = append(out, m.Index)
		}
		return out
	}
	write(10)
	write(25)
	if got := indexes(); len(got) != 2 || got[0] != 25 || got[1] != 10 {
		t.Fatalf("after 10 and 25: %v, want [25 10]", got)
	}
	write(22) // the file store reaps 10 (it keeps two), then 25 goes
	if got := indexes(); len(got) != 1 || got[0] != 22 {
		t.Fatalf("after an install at 22: %v, want [22]", got)
	}
	write(30)
	if got := indexes(); len(got) != 2 || got[0] != 30 || got[1] != 22 {
		t.Fatalf("after 30: %v, want [30 22]", got)
	}
}
