package storage

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
)

// TestPrepareRejoinMovesAsideAndKeepsTheVote: the log, the journal and the
// snapshots go into damaged-<time> (nothing deleted), myid stays, and the
// fresh raft.db holds the old term and vote and no log.
func TestPrepareRejoinMovesAsideAndKeepsTheVote(t *testing.T) {
	dir := t.TempDir()
	db, err := raftboltdb.NewBoltStore(filepath.Join(dir, LogStoreFile))
	if err != nil {
		t.Fatal(err)
	}
	_ = db.SetUint64(keyCurrentTerm, 7)
	_ = db.SetUint64(keyLastVoteTerm, 7)
	_ = db.Set(keyLastVoteCand, []byte("2"))
	_ = db.StoreLog(&raft.Log{Index: 1, Term: 1})
	db.Close()
	for _, p := range []string{JournalFile, "myid", SnapshotsDir + "/1-2-3/state.bin"} {
		_ = os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o700)
		if err := os.WriteFile(filepath.Join(dir, p), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	res, err := PrepareRejoin(dir, "", now)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Moved) != 3 || res.Term != 7 || !res.VoteKept || len(res.Warnings) != 0 {
		t.Fatalf("result %+v", res)
	}
	aside := filepath.Join(dir, "damaged-20261127T120000Z")
	for _, p := range []string{LogStoreFile, JournalFile, SnapshotsDir + "/1-2-3/state.bin"} {
		if _, err := os.Stat(filepath.Join(aside, p)); err != nil {
			t.Fatalf("%s not moved aside: %v", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "myid")); err != nil {
		t.Fatal("myid moved")
	}
	db, err = raftboltdb.NewBoltStore(filepath.Join(dir, LogStoreFile))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	term, _ := db.GetUint64(keyCurrentTerm)
	cand, _ := db.Get(keyLastVoteCand)
	last, _ := db.LastIndex()
	if term != 7 || string(cand) != "2" || last != 0 {
		t.Fatalf("fresh raft.db: term %d, vote %q, last index %d", term, cand, last)
	}
}

// TestPrepareRejoinRefusesARunningMember: a raft.db that a process holds
// open (bolt's lock) is left alone.
func TestPrepareRejoinRefusesARunningMember(t *testing.T) {
	dir := t.TempDir()
	db, err := raftboltdb.NewBoltStore(filepath.Join(dir, LogStoreFile))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = PrepareRejoin(dir, "", time.Now())
	if err == nil || !strings.Contains(err.Error(), "stop the member") {
		t.Fatalf("rejoin of a running member: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, LogStoreFile)); err != nil {
		t.Fatal("raft.db moved from under a running member")
	}
}

// TestPrepareRejoinRefusesALoneMember: a member whose Raft configuration
// lists it alone (a standalone server, in its log or its newest snapshot)
// has no peer to catch up from: PrepareRejoin refuses and moves nothing.
// A member of three goes ahead.
func TestPrepareRejoinRefusesALoneMember(t *testing.T) {
	alone := raft.Configuration{Servers: []raft.Server{{ID: "1", Address: "1"}}}
	three := raft.Configuration{}
	for _, id := range []raft.ServerID{"1", "2", "3"} {
		three.Servers = append(three.Servers, raft.Server{ID: id, Address: raft.ServerAddress("127.0.0.1:288" + string(id))})
	}
	// setup stores entries 1..50 through the packed store the member
	// uses, a configuration entry at 1, and a snapshot's meta if given.
	setup := func(t *testing.T, logConf raft.Configuration, snapConf *raft.Configuration) string {
		dir := t.TempDir()
		db, err := raftboltdb.NewBoltStore(filepath.Join(dir, LogStoreFile))
		if err != nil {
			t.Fatal(err)
		}
		logs, err := NewPackedLogStore(ChunkedLogStore{LogStore: db})
		if err != nil {
			t.Fatal(err)
		}
		entries := []*raft.Log{{Index: 1, Term: 1, Type: raft.LogConfiguration, Data: raft.EncodeConfiguration(logConf)}}
		for i := uint64(2); i <= 50; i++ {
			entries = append(entries, &raft.Log{Index: i, Term: 2, Type: raft.LogCommand, Data: []byte("w")})
		}
		if err := logs.StoreLogs(entries); err != nil {
			t.Fatal(err)
		}
		_ = db.SetUint64(keyCurrentTerm, 2)
		db.Close()
		if snapConf != nil {
			meta, _ := json.Marshal(raft.SnapshotMeta{ID: "2-60-1", Index: 60, Term: 2, Configuration: *snapConf, ConfigurationIndex: 55})
			_ = os.MkdirAll(filepath.Join(dir, SnapshotsDir, "2-60-1"), 0o700)
			if err := os.WriteFile(filepath.Join(dir, SnapshotsDir, "2-60-1", "meta.json"), meta, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	refused := func(t *testing.T, dir string) {
		t.Helper()
		_, err := PrepareRejoin(dir, "", time.Now())
		if err == nil || !strings.Contains(err.Error(), "no peers to catch up from") {
			t.Fatalf("PrepareRejoin of a lone member: %v", err)
		}
		if matches, _ := filepath.Glob(filepath.Join(dir, "damaged-*")); len(matches) != 0 {
			t.Fatalf("moved aside although refused: %v", matches)
		}
		if _, err := os.Stat(filepath.Join(dir, LogStoreFile)); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("standalone log", func(t *testing.T) { refused(t, setup(t, alone, nil)) })
	t.Run("standalone snapshot", func(t *testing.T) { refused(t, setup(t, three, &alone)) })
	t.Run("ensemble", func(t *testing.T) {
		dir := setup(t, alone, &three) // the snapshot's is the newer
		if conf, ok := LastConfiguration(dir, ""); !ok || len(conf.Servers) != 3 {
			t.Fatalf("LastConfiguration: %v %+v", ok, conf)
		}
		if _, err := PrepareRejoin(dir, "", time.Now()); err != nil {
			t.Fatal(err)
		}
	})
}
