package storage

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/hashicorp/raft"
	"go.uber.org/zap"
)

// OrderedSnapshots is the member's file snapshot store, with one rule
// added: once a snapshot is written, no snapshot sorts after it. On
// start, Raft restores the snapshot that sorts first (highest term, then
// index). In a running ensemble every snapshot written sorts first anyway:
// a member's own are taken at rising applied indexes, and a leader installs
// one only where the member's log stops short of its own snapshot.
//
// Members seeded with different states break that. An import on each
// member of a stopped ZooKeeper ensemble, one of which had logged a
// proposal the others never acknowledged, gives that member a seed at a
// higher index. The others elect a leader without it, and it takes their
// state by an install at a lower index than its seed. Left on disk, the
// stale seed would be restored at its next start, over the history the
// ensemble went on with.
type OrderedSnapshots struct {
	*raft.FileSnapshotStore
	dir string // the store's own directory of snapshots
	log *zap.Logger
}

// NewOrderedSnapshots wraps files, a file snapshot store whose snapshots
// are in dir, logging to log.
func NewOrderedSnapshots(files *raft.FileSnapshotStore, dir string, log *zap.Logger) *OrderedSnapshots {
	return &OrderedSnapshots{FileSnapshotStore: files, dir: dir, log: log}
}

// Create starts a snapshot as the file store does; the snapshot's Close
// drops any snapshot that sorts after it.
func (s *OrderedSnapshots) Create(version raft.SnapshotVersion, index, term uint64, configuration raft.Configuration,
	configurationIndex uint64, trans raft.Transport) (raft.SnapshotSink, error) {
	sink, err := s.FileSnapshotStore.Create(version, index, term, configuration, configurationIndex, trans)
	if err != nil {
		return nil, err
	}
	// The file store makes the snapshot's directory 0755 and its files
	// 0644 (less the umask); they are made private before the state is
	// written (rewrites and the final rename keep the modes).
	if err := PrivateTree(filepath.Join(s.dir, sink.ID()+".tmp"), nil); err != nil {
		_ = sink.Cancel()
		return nil, err
	}
	return &orderedSink{SnapshotSink: sink, store: s}, nil
}

// orderedSink is a snapshot being written to an OrderedSnapshots.
type orderedSink struct {
	raft.SnapshotSink
	store *OrderedSnapshots
}

// Close completes the snapshot (durably, by the file store), then drops
// the snapshots that sort after it.
func (k *orderedSink) Close() error {
	if err := k.SnapshotSink.Close(); err != nil {
		return err
	}
	return k.store.dropAfter(k.ID())
}

// dropAfter deletes the snapshots listed before id, the newest first.
func (s *OrderedSnapshots) dropAfter(id string) error {
	metas, err := s.List()
	if err != nil {
		return fmt.Errorf("storage: list snapshots: %w", err)
	}
	for _, m := range metas {
		if m.ID == id {
			return nil
		}
		s.log.Warn("dropping a snapshot newer than the leader's just installed: its history is not the ensemble's",
			zap.String("snapshot", m.ID), zap.Uint64("term", m.Term), zap.Uint64("index", m.Index))
		if err := os.RemoveAll(filepath.Join(s.dir, m.ID)); err != nil {
			return fmt.Errorf("storage: drop snapshot %s: %w", m.ID, err)
		}
	}
	s.log.Error("the snapshot just written is not among the newest kept", zap.String("snapshot", id))
	return nil
}
