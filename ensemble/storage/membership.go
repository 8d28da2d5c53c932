package storage

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"
)

// LastConfiguration reads the newest Raft configuration (the membership) a
// stopped member's files hold, without changing them: the last
// configuration entry of the log in logDir's raft.db ("" = dataDir) or
// the newest snapshot's in dataDir, whichever is later. ok is false when
// neither reads (damaged or absent). The journal's last moments (entries
// not yet in raft.db) are not read: a membership change reaches raft.db
// within the journal's flush delay.
func LastConfiguration(dataDir, logDir string) (conf raft.Configuration, ok bool) {
	if logDir == "" {
		logDir = dataDir
	}
	conf, index, ok := logConfiguration(filepath.Join(logDir, LogStoreFile))
	if sconf, sindex, sok := snapshotConfiguration(filepath.Join(dataDir, SnapshotsDir)); sok && (!ok || sindex > index) {
		return sconf, true
	}
	return conf, ok
}

// logConfiguration is the last configuration entry of the log in the
// raft.db at path and its index, read-only.
func logConfiguration(path string) (conf raft.Configuration, index uint64, ok bool) {
	if _, err := os.Stat(path); err != nil || CheckBoltFile(path) != nil {
		return conf, 0, false
	}
	// A damaged page can make bolt panic: then the log does not read.
	defer func() {
		if recover() != nil {
			conf, index, ok = raft.Configuration{}, 0, false
		}
	}()
	db, err := raftboltdb.New(raftboltdb.Options{Path: path, BoltOptions: &bbolt.Options{ReadOnly: true, Timeout: time.Second}})
	if err != nil {
		return conf, 0, false
	}
	defer db.Close()
	logs, err := NewPackedLogStore(ChunkedLogStore{LogStore: db})
	if err != nil {
		return conf, 0, false
	}
	first, err1 := logs.FirstIndex()
	last, err2 := logs.LastIndex()
	if err1 != nil || err2 != nil || last == 0 {
		return conf, 0, false
	}
	var entry raft.Log
	for i := last; i >= first && i > 0; i-- {
		if logs.GetLog(i, &entry) != nil || entry.Type != raft.LogConfiguration {
			continue
		}
		return raft.DecodeConfiguration(entry.Data), i, true
	}
	return conf, 0, false
}

// snapshotConfiguration is the configuration of the newest snapshot in
// dir whose meta.json reads, and the index it was made at.
func snapshotConfiguration(dir string) (conf raft.Configuration, index uint64, ok bool) {
	metas, _ := filepath.Glob(filepath.Join(dir, "*", "meta.json"))
	for _, path := range metas {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		var meta raft.SnapshotMeta
		if json.Unmarshal(b, &meta) != nil || len(meta.Configuration.Servers) == 0 {
			continue
		}
		if !ok || meta.ConfigurationIndex > index {
			conf, index, ok = meta.Configuration, meta.ConfigurationIndex, true
		}
	}
	return conf, index, ok
}

// errNoPeers is PrepareRejoin's refusal for a member that is alone in its
// membership (a standalone server, or a one-member ensemble).
func errNoPeers(conf raft.Configuration) error {
	return fmt.Errorf("storage: the member's Raft configuration lists only server %s (a standalone server or a "+
		"one-member ensemble): there are no peers to catch up from, so moving its log and snapshots aside would "+
		"leave it waiting for a leader forever; restore a backup (zkraft snapshot restore) instead",
		conf.Servers[0].ID)
}
