package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
)

// TestPackedLogDetectsAFlippedByteInRaftDB: a byte of an entry flipped on
// disk inside raft.db is a loud error naming the entry, where the log
// used to hand the damaged entry to Raft as if it were good.
func TestPackedLogDetectsAFlippedByteInRaftDB(t *testing.T) {
	path := filepath.Join(t.TempDir(), "raft.db")
	p := openPackTestStore(t, path)
	var logs []*raft.Log
	for i := uint64(1); i <= 40; i++ {
		logs = append(logs, testEntry(i, 1))
	}
	for _, run := range [][]*raft.Log{logs[:10], logs[10:20], logs[20:]} {
		if err := p.store.StoreLogs(run); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.bolt.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Every copy: bolt's copy-on-write leaves stale ones in free pages.
	found := false
	for from := 0; ; {
		at := bytes.Index(raw[from:], []byte("entry 15 term 1"))
		if at < 0 {
			break
		}
		flipByte(t, path, int64(from+at+3))
		from += at + 1
		found = true
	}
	if !found {
		t.Fatal("entry 15 not found in raft.db")
	}

	var failed error
	b, err := raftboltdb.NewBoltStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	s, err := NewPackedLogStore(ChunkedLogStore{b})
	if err != nil {
		t.Fatal(err) // the damaged pack is neither the first nor the last
	}
	s.Fail = func(err error) { failed = err }
	var got raft.Log
	err = s.GetLog(15, &got)
	if err == nil {
		t.Fatalf("a damaged entry read back without an error: %q", got.Data)
	}
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "entry 20") || !strings.Contains(err.Error(), "raft.db") {
		t.Fatalf("error %v does not name the pack's entry and file", err)
	}
	if failed == nil {
		t.Fatal("Fail was not called")
	}
	if err := s.GetLog(30, &got); err != nil || !sameEntry(&got, testEntry(30, 1)) {
		t.Fatalf("an undamaged pack: %v", err)
	}
}

// TestPackedLogReadsVersion1Packs: packs written before checksums (version
// 1, no CRC) still read.
func TestPackedLogReadsVersion1Packs(t *testing.T) {
	inner := raft.NewInmemStore()
	logs := []*raft.Log{testEntry(1, 1), testEntry(2, 1), testEntry(3, 1)}
	v2 := encodePack(logs)
	v1 := append([]byte{packVersionV1}, v2[1:len(v2)-packCRCSize]...)
	if err := inner.StoreLog(&raft.Log{Index: 3, Term: 1, Type: packLogType, Data: v1}); err != nil {
		t.Fatal(err)
	}
	s, err := NewPackedLogStore(inner)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range logs {
		var got raft.Log
		if err := s.GetLog(want.Index, &got); err != nil || !sameEntry(&got, want) {
			t.Fatalf("entry %d: %v %+v", want.Index, err, got)
		}
	}
	if binary.BigEndian.Uint32(v2[len(v2)-packCRCSize:]) == 0 {
		t.Fatal("no checksum written")
	}
}
