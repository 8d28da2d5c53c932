package storage

import (
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
