package storage

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"
)

// raftDBFixture is a raft.db written by fixtureHistory with bbolt v1.3.5
// and raft-boltdb v2.3.1, opened with the member's bolt options (the
// freelist not synced, the hashmap freelist). It is kept as it was
// written: its point is to be a file of an older build, so that a change
// of bolt, of the store over it or of the pack codec has to open it.
// STORAGE_WRITE_RAFTDB_FIXTURE=path writes the same history with this
// build (TestWriteRaftDBFixture), for a fixture of a later format.
const raftDBFixture = "testdata/raft-bbolt1.3.5.db"

// fixtureBoltOptions are the bolt options a member opens raft.db with
// (ensemble/node.go).
func fixtureBoltOptions() *bbolt.Options {
	return &bbolt.Options{Timeout: time.Second, NoFreelistSync: true, FreelistType: bbolt.FreelistMapType}
}

// fixtureEntry is entry idx of term as fixtureHistory writes it: the
// fields of testEntry, and every 97th entry 5000 bytes, so that packs
// span overflow pages.
func fixtureEntry(idx, term uint64) *raft.Log {
	l := testEntry(idx, term)
	if idx%97 == 0 {
		l.Type, l.Data = raft.LogCommand, bytes.Repeat([]byte{byte(idx)}, 5000)
	}
	return l
}

func fixtureEntries(first, last, term uint64) []*raft.Log {
	logs := make([]*raft.Log, 0, last-first+1)
	for i := first; i <= last; i++ {
		logs = append(logs, fixtureEntry(i, term))
	}
	return logs
}

// fixtureTerm is the term fixtureHistory leaves entry idx at.
func fixtureTerm(idx uint64) uint64 {
	switch {
	case idx <= 120:
		return 1
	case idx <= 2900:
		return 2
	}
	return 3
}

const (
	fixtureFirst = 31   // fixtureHistory compacts 1-30
	fixtureLast  = 3100 // and truncates 2901-3020 before appending up to here
)

// fixtureHistory writes every kind of record a raft.db holds into store
// (a raft-boltdb store, or one of the same format):
//
//   - 1-60: one entry per record, as before packs existed;
//   - 61-120: one version 1 pack (no checksum of its own);
//   - 121-3020: version 2 packs of 100 entries each, term 2;
//   - 1-30 compacted away, a prefix of whole records;
//   - 2901-3020 truncated, inside the pack 2821-2920, which is rewritten
//     as 2821-2900; then 2901-3100 appended in term 3;
//   - Raft's term and vote in the conf bucket.
func fixtureHistory(t *testing.T, store interface {
	raft.LogStore
	raft.StableStore
}) {
	t.Helper()
	for i := uint64(1); i <= 60; i += 10 {
		if err := store.StoreLogs(fixtureEntries(i, i+9, 1)); err != nil {
			t.Fatal(err)
		}
	}
	v1 := &raft.Log{Index: 120, Term: 1, Type: packLogType, Data: appendUncheckedPack(nil, fixtureEntries(61, 120, 1))}
	if err := store.StoreLogs([]*raft.Log{v1}); err != nil {
		t.Fatal(err)
	}
	packed, err := NewPackedLogStore(ChunkedLogStore{store})
	if err != nil {
		t.Fatal(err)
	}
	for i := uint64(121); i <= 3020; i += 100 {
		if err := packed.StoreLogs(fixtureEntries(i, i+99, 2)); err != nil {
			t.Fatal(err)
		}
	}
	if err := packed.DeleteRange(1, fixtureFirst-1); err != nil {
		t.Fatal(err)
	}
	if err := packed.DeleteRange(2901, 3020); err != nil {
		t.Fatal(err)
	}
	for i := uint64(2901); i <= fixtureLast; i += 50 {
		if err := packed.StoreLogs(fixtureEntries(i, i+49, 3)); err != nil {
			t.Fatal(err)
		}
	}
	for _, kv := range []struct {
		k string
		v uint64
	}{{"CurrentTerm", 3}, {"LastVoteTerm", 3}} {
		if err := store.SetUint64([]byte(kv.k), kv.v); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Set([]byte("LastVoteCand"), []byte("127.0.0.1:2888")); err != nil {
		t.Fatal(err)
	}
}

// TestWriteRaftDBFixture writes fixtureHistory with this build into the
// file STORAGE_WRITE_RAFTDB_FIXTURE names; skipped without it.
func TestWriteRaftDBFixture(t *testing.T) {
	path := os.Getenv("STORAGE_WRITE_RAFTDB_FIXTURE")
	if path == "" {
		t.Skip("STORAGE_WRITE_RAFTDB_FIXTURE is not set")
	}
	store, err := raftboltdb.New(raftboltdb.Options{Path: path, BoltOptions: fixtureBoltOptions()})
	if err != nil {
		t.Fatal(err)
	}
	fixtureHistory(t, store)
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
}

// copyFixture copies the fixture into a new directory: opening a bolt
// file writes to it.
func copyFixture(t *testing.T) string {
	t.Helper()
	src, err := os.Open(raftDBFixture)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	path := filepath.Join(t.TempDir(), LogStoreFile)
	dst, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkFixtureLog reads every entry of first..last through a packed store
// over path, opened as a member opens raft.db, and Raft's term and vote.
func checkFixtureLog(t *testing.T, path string, first, last uint64) {
	t.Helper()
	if err := CheckBoltFile(path); err != nil {
		t.Fatal(err)
	}
	store, err := raftboltdb.New(raftboltdb.Options{Path: path, BoltOptions: fixtureBoltOptions()})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	packed, err := NewPackedLogStore(ChunkedLogStore{store})
	if err != nil {
		t.Fatal(err)
	}
	gotFirst, _ := packed.FirstIndex()
	gotLast, _ := packed.LastIndex()
	if gotFirst != first || gotLast != last {
		t.Fatalf("the log holds %d-%d, want %d-%d", gotFirst, gotLast, first, last)
	}
	for i := first; i <= last; i++ {
		var got raft.Log
		if err := packed.GetLog(i, &got); err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		if want := fixtureEntry(i, fixtureTerm(i)); !sameEntry(&got, want) {
			t.Fatalf("entry %d reads %+v, want %+v", i, got, *want)
		}
	}
	for _, i := range []uint64{first - 1, last + 1} {
		if err := packed.GetLog(i, new(raft.Log)); !errors.Is(err, raft.ErrLogNotFound) {
			t.Fatalf("entry %d outside the log: %v, want ErrLogNotFound", i, err)
		}
	}
	if term, err := store.GetUint64([]byte("CurrentTerm")); err != nil || term != 3 {
		t.Fatalf("CurrentTerm %d, %v; want 3", term, err)
	}
	if cand, err := store.Get([]byte("LastVoteCand")); err != nil || string(cand) != "127.0.0.1:2888" {
		t.Fatalf("LastVoteCand %q, %v", cand, err)
	}
	if _, err := store.Get([]byte("missing")); err == nil || err.Error() != "not found" {
		// raft tells a fresh store by this message.
		t.Fatalf("a missing key: %v, want \"not found\"", err)
	}
}

// TestRaftDBFixtureOpens: a raft.db written by an older build opens and
// reads back whole, takes appends, a compaction into a pack and a
// truncation, and reopens with all of them.
func TestRaftDBFixtureOpens(t *testing.T) {
	path := copyFixture(t)
	checkFixtureLog(t, path, fixtureFirst, fixtureLast)

	store, err := raftboltdb.New(raftboltdb.Options{Path: path, BoltOptions: fixtureBoltOptions()})
	if err != nil {
		t.Fatal(err)
	}
	packed, err := NewPackedLogStore(ChunkedLogStore{store})
	if err != nil {
		t.Fatal(err)
	}
	// Entries of term 3 from fixtureLast+1; 1500 falls inside the pack
	// 1421-1520, which keeps its older entries: the log starts at 1421
	// when it is opened again.
	if err := packed.StoreLogs(fixtureEntries(fixtureLast+1, fixtureLast+300, 3)); err != nil {
		t.Fatal(err)
	}
	if err := packed.DeleteRange(fixtureFirst, 1500); err != nil {
		t.Fatal(err)
	}
	if err := packed.DeleteRange(fixtureLast+201, fixtureLast+300); err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	checkFixtureLog(t, path, 1421, fixtureLast+200)
}

// TestRaftDBFixtureIsTheHistory: the fixture holds what fixtureHistory
// writes with this build, record for record and byte for byte, so the
// format it checks is the one a member writes today.
func TestRaftDBFixtureIsTheHistory(t *testing.T) {
	path := filepath.Join(t.TempDir(), LogStoreFile)
	store, err := raftboltdb.New(raftboltdb.Options{Path: path, BoltOptions: fixtureBoltOptions()})
	if err != nil {
		t.Fatal(err)
	}
	fixtureHistory(t, store)
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	want, got := boltRecords(t, copyFixture(t)), boltRecords(t, path)
	if len(got) != len(want) {
		t.Fatalf("this build writes %d records, the fixture holds %d", len(got), len(want))
	}
	for k, v := range want {
		if !bytes.Equal(got[k], v) {
			t.Fatalf("record %s: this build writes %d bytes %.32x…, the fixture holds %d bytes %.32x…", k, len(got[k]), got[k], len(v), v)
		}
	}
}

// boltRecords is every key and value of every bucket of the bolt file at
// path, keyed by bucket/key in hex.
func boltRecords(t *testing.T, path string) map[string][]byte {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	recs := make(map[string][]byte)
	err = db.View(func(tx *bbolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bbolt.Bucket) error {
			return b.ForEach(func(k, v []byte) error {
				recs[fmt.Sprintf("%s/%x", name, k)] = bytes.Clone(v)
				return nil
			})
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return recs
}
