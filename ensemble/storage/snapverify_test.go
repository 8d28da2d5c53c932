package storage

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/raft"
	"go.uber.org/zap"
)

// newTestSnapshots is an OrderedSnapshots in dir with snapshots at the
// given indexes, and the newest one's directory.
func newTestSnapshots(t *testing.T, dir string, indexes ...uint64) (*OrderedSnapshots, string) {
	t.Helper()
	files, err := raft.NewFileSnapshotStore(dir, 2, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	store := NewOrderedSnapshots(files, filepath.Join(dir, SnapshotsDir), zap.NewNop())
	_, trans := raft.NewInmemTransport("")
	var id string
	for _, index := range indexes {
		sink, err := store.Create(raft.SnapshotVersionMax, index, 1, raft.Configuration{}, 1, trans)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sink.Write([]byte("the state at this index, long enough to damage")); err != nil {
			t.Fatal(err)
		}
		id = sink.ID()
		if err := sink.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return store, filepath.Join(dir, SnapshotsDir, id)
}

// TestSnapshotVerifyRefusesADamagedNewest: the newest snapshot with a
// flipped byte in its state, cut short, or with an unreadable meta, is
// refused naming the file, rather than Raft falling back to the older
// snapshot; an older damaged snapshot does not matter.
func TestSnapshotVerifyRefusesADamagedNewest(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, snap string) (string, int64)
	}{
		{"flipped", func(t *testing.T, snap string) (string, int64) {
			flipByte(t, filepath.Join(snap, "state.bin"), 7)
			return filepath.Join(snap, "state.bin"), -1
		}},
		{"truncated", func(t *testing.T, snap string) (string, int64) {
			if err := os.Truncate(filepath.Join(snap, "state.bin"), 10); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(snap, "state.bin"), 10
		}},
		{"meta", func(t *testing.T, snap string) (string, int64) {
			flipByte(t, filepath.Join(snap, "meta.json"), 0)
			return filepath.Join(snap, "meta.json"), -1
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, newest := newTestSnapshots(t, t.TempDir(), 10, 20)
			if err := store.Verify(); err != nil {
				t.Fatalf("whole snapshots: %v", err)
			}
			path, off := tc.damage(t, newest)
			wantCorrupt(t, store.Verify(), path, off)
		})
	}
}

// TestSnapshotVerifyIgnoresOlderDamage: only the snapshot Raft restores is
// read; damage to an older one is not a reason to refuse.
func TestSnapshotVerifyIgnoresOlderDamage(t *testing.T) {
	dir := t.TempDir()
	store, _ := newTestSnapshots(t, dir, 10)
	ids, _ := snapshotIDs(filepath.Join(dir, SnapshotsDir))
	older := filepath.Join(dir, SnapshotsDir, ids[0])
	store, _ = newTestSnapshots(t, dir, 20)
	flipByte(t, filepath.Join(older, "state.bin"), 3)
	if err := store.Verify(); err != nil {
		t.Fatal(err)
	}
}
