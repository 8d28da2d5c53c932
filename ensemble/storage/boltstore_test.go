package storage

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"go.etcd.io/bbolt"
)

// TestBoltStoreContract: what Raft and the packed store rely on — 0 for
// the ends of an empty log, ErrLogNotFound and "not found" for what is
// missing, inclusive deletes, entries read back field for field, and a
// value from Get that is the caller's own.
func TestBoltStoreContract(t *testing.T) {
	path := filepath.Join(t.TempDir(), LogStoreFile)
	s, err := OpenBoltStore(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ends := func(wantFirst, wantLast uint64) {
		t.Helper()
		first, err1 := s.FirstIndex()
		last, err2 := s.LastIndex()
		if first != wantFirst || last != wantLast || err1 != nil || err2 != nil {
			t.Fatalf("ends %d-%d (%v, %v), want %d-%d", first, last, err1, err2, wantFirst, wantLast)
		}
	}
	ends(0, 0)
	if err := s.GetLog(1, new(raft.Log)); !errors.Is(err, raft.ErrLogNotFound) {
		t.Fatalf("GetLog of an empty log: %v", err)
	}
	var logs []*raft.Log
	for i := uint64(1); i <= 30; i++ {
		logs = append(logs, testEntry(i, 1+i/10))
	}
	if err := s.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	ends(1, 30)
	for _, want := range logs {
		var got raft.Log
		if err := s.GetLog(want.Index, &got); err != nil || !sameEntry(&got, want) {
			t.Fatalf("entry %d reads %+v (%v), want %+v", want.Index, got, err, *want)
		}
	}
	if err := s.DeleteRange(1, 10); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRange(25, 40); err != nil {
		t.Fatal(err)
	}
	ends(11, 24)
	for _, i := range []uint64{10, 25} {
		if err := s.GetLog(i, new(raft.Log)); !errors.Is(err, raft.ErrLogNotFound) {
			t.Fatalf("deleted entry %d: %v", i, err)
		}
	}

	if _, err := s.Get([]byte("CurrentTerm")); err == nil || err.Error() != "not found" {
		t.Fatalf("a missing key: %v, want \"not found\" (raft tells a fresh store by it)", err)
	}
	if _, err := s.GetUint64([]byte("CurrentTerm")); !errors.Is(err, ErrKeyNotFound) {
		t.Fatalf("GetUint64 of a missing key: %v", err)
	}
	if err := s.SetUint64([]byte("CurrentTerm"), 7); err != nil {
		t.Fatal(err)
	}
	if v, err := s.GetUint64([]byte("CurrentTerm")); err != nil || v != 7 {
		t.Fatalf("CurrentTerm %d, %v", v, err)
	}
	if err := s.Set([]byte("LastVoteCand"), []byte("10.0.0.1:2888")); err != nil {
		t.Fatal(err)
	}
	v, err := s.Get([]byte("LastVoteCand"))
	if err != nil {
		t.Fatal(err)
	}
	v[0] = 'X'
	if again, _ := s.Get([]byte("LastVoteCand")); string(again) != "10.0.0.1:2888" {
		t.Fatalf("changing Get's value changed the store: %q", again)
	}
	if err := s.Set([]byte("Short"), []byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetUint64([]byte("Short")); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("GetUint64 of 3 bytes: %v, want ErrCorrupt", err)
	}
}

// TestBoltStoreReadOnlyWithoutBuckets: a bolt file without the buckets
// (created by something else) opened read-only, as rejoin reads the term,
// reads as empty instead of panicking.
func TestBoltStoreReadOnlyWithoutBuckets(t *testing.T) {
	path := filepath.Join(t.TempDir(), LogStoreFile)
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := OpenBoltStore(path, &bbolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if last, err := s.LastIndex(); last != 0 || err != nil {
		t.Fatalf("LastIndex %d, %v", last, err)
	}
	if err := s.GetLog(1, new(raft.Log)); !errors.Is(err, raft.ErrLogNotFound) {
		t.Fatalf("GetLog: %v", err)
	}
	if _, err := s.GetUint64([]byte("CurrentTerm")); !errors.Is(err, ErrKeyNotFound) {
		t.Fatalf("GetUint64: %v", err)
	}
}
