package ensemble

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/zkraft/zkraft/ensemble/storage"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"

	"github.com/zkraft/zkraft/znode"
)

// membership is the Raft configuration a first start bootstraps with:
// this member alone when standalone, else every peer (observers as
// non-voters). Every member derives the same one.
func (c Config) membership() raft.Configuration {
	if !c.multi() {
		id := raftID(c.ID)
		return raft.Configuration{Servers: []raft.Server{{ID: id, Address: raft.ServerAddress(id)}}}
	}
	var conf raft.Configuration
	for _, p := range c.Peers {
		suffrage := raft.Voter
		if p.Observer {
			suffrage = raft.Nonvoter
		}
		conf.Servers = append(conf.Servers, raft.Server{Suffrage: suffrage, ID: raftID(p.ID), Address: raft.ServerAddress(p.Addr)})
	}
	return conf
}

// ErrHasState is returned by Seed for a data directory that already holds
// a member's state.
var ErrHasState = errors.New("ensemble: the data directory already holds state")

// Seed makes tree the state a member starts from, in place of the empty
// tree of a first start: it writes a Raft snapshot at log index
// lastIndex (term 1) holding tree and cfg's membership into cfg.DataDir,
// and the term into the log directory's raft.db (cfg.LogDir when set);
// neither may hold state yet. Seed every member of a new ensemble with
// the same tree, index and peers, as each would bootstrap alike; the
// first write after it gets zxid lastIndex+1. An importer passes the last
// zxid of the server it carries state over from, so zxids clients have
// seen stay behind every new one. The tree's last zxid is raised to
// lastIndex.
func Seed(cfg Config, tree *znode.Tree, lastIndex uint64) error {
	cfg.setDefaults()
	if lastIndex == 0 || tree.LastZxid() > int64(lastIndex) {
		return fmt.Errorf("ensemble: seed: index %d is 0 or below the tree's last zxid %d", lastIndex, tree.LastZxid())
	}
	tree.AdvanceZxid(int64(lastIndex))
	logDir := cfg.DataDir
	if cfg.LogDir != "" {
		logDir = cfg.LogDir
	}
	if p, ok := stateFile(cfg.DataDir, logDir); ok {
		return fmt.Errorf("%w (%s)", ErrHasState, p)
	}
	for _, d := range []string{cfg.DataDir, logDir} {
		if err := storage.PrivateDir(d, cfg.Logger); err != nil {
			return err
		}
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(cfg.DataDir, 2, newHCLogger(cfg.Logger, cfg.multi()))
	if err != nil {
		return fmt.Errorf("ensemble: snapshot store: %w", err)
	}
	const term = 1
	// The store writes the membership's legacy peer list too, encoded by a
	// transport; every transport encodes an address as its bytes.
	_, enc := raft.NewInmemTransport("")
	defer enc.Close()
	sink, err := snaps.Create(raft.SnapshotVersionMax, lastIndex, term, cfg.membership(), lastIndex, enc)
	if err != nil {
		return fmt.Errorf("ensemble: seed snapshot: %w", err)
	}
	if err := writeTree(sink, tree); err != nil {
		_ = sink.Cancel()
		return fmt.Errorf("ensemble: seed snapshot: %w", err)
	}
	if err := sink.Close(); err != nil {
		return fmt.Errorf("ensemble: seed snapshot: %w", err)
	}
	// The stable store's term, as raft.BootstrapCluster sets it.
	store, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(logDir, storage.LogStoreFile)})
	if err != nil {
		return fmt.Errorf("ensemble: open raft.db: %w", err)
	}
	defer store.Close()
	if err := store.SetUint64([]byte("CurrentTerm"), term); err != nil {
		return fmt.Errorf("ensemble: seed term: %w", err)
	}
	// A seeded member forms a new ensemble: its first leader mints a new
	// ensemble id (level.go), whatever ensemble the tree came from.
	return markFormation(store, int64(lastIndex))
}

// HasState reports whether dataDir, or logDir (the data directory when
// empty), holds a member's state: a Raft snapshot, log or journal.
func HasState(dataDir, logDir string) bool {
	if logDir == "" {
		logDir = dataDir
	}
	_, ok := stateFile(dataDir, logDir)
	return ok
}

// stateFile returns the first file of a member's state found.
func stateFile(dataDir, logDir string) (string, bool) {
	for _, p := range []string{
		filepath.Join(dataDir, storage.SnapshotsDir),
		filepath.Join(dataDir, storage.LogStoreFile), filepath.Join(dataDir, storage.JournalFile),
		filepath.Join(logDir, storage.LogStoreFile), filepath.Join(logDir, storage.JournalFile),
	} {
		if _, err := os.Stat(p); err == nil {
			return p, true
		}
	}
	return "", false
}

func writeTree(w io.Writer, tree *znode.Tree) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	if err := tree.WriteSnapshot(bw); err != nil {
		return err
	}
	return bw.Flush()
}
