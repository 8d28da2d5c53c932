package storage

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
)

// packTestStore is a packed store over a real raft-boltdb file that can be
// closed and reopened.
type packTestStore struct {
	t     *testing.T
	path  string
	bolt  *raftboltdb.BoltStore
	store *PackedLogStore
}

func openPackTestStore(t *testing.T, path string) *packTestStore {
	t.Helper()
	b, err := raftboltdb.NewBoltStore(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewPackedLogStore(ChunkedLogStore{b})
	if err != nil {
		t.Fatal(err)
	}
	return &packTestStore{t: t, path: path, bolt: b, store: s}
}

func (p *packTestStore) reopen() {
	p.t.Helper()
	if err := p.bolt.Close(); err != nil {
		p.t.Fatal(err)
	}
	*p = *openPackTestStore(p.t, p.path)
}

func testEntry(idx, term uint64) *raft.Log {
	l := &raft.Log{Index: idx, Term: term, Type: raft.LogCommand, Data: []byte(fmt.Sprintf("entry %d term %d", idx, term))}
	if idx%7 == 0 {
		l.Extensions = []byte{byte(idx)}
	}
	if idx%3 == 0 {
		l.AppendedAt = time.Unix(1700000000, int64(idx))
	}
	if idx%11 == 0 {
		l.Type, l.Data = raft.LogNoop, nil
	}
	return l
}

func sameEntry(a, b *raft.Log) bool {
	return a.Index == b.Index && a.Term == b.Term && a.Type == b.Type && bytes.Equal(a.Data, b.Data) &&
		bytes.Equal(a.Extensions, b.Extensions) && a.AppendedAt.Equal(b.AppendedAt)
}

// check compares every index around [first, last] with the expected entries.
func (p *packTestStore) check(want map[uint64]*raft.Log, first, last uint64) {
	p.t.Helper()
	gotFirst, _ := p.store.FirstIndex()
	gotLast, _ := p.store.LastIndex()
	if gotFirst != first || gotLast != last {
		p.t.Fatalf("first/last %d/%d, want %d/%d", gotFirst, gotLast, first, last)
	}
	lo := uint64(1)
	if first > 3 {
		lo = first - 3
	}
	for i := lo; i <= last+3; i++ {
		var got raft.Log
		err := p.store.GetLog(i, &got)
		if first == 0 || i < first || i > last {
			if !errors.Is(err, raft.ErrLogNotFound) {
				p.t.Fatalf("entry %d outside %d-%d: err %v", i, first, last, err)
			}
			continue
		}
		if err != nil {
			p.t.Fatalf("entry %d: %v", i, err)
		}
		if !sameEntry(&got, want[i]) {
			p.t.Fatalf("entry %d: got %+v want %+v", i, got, *want[i])
		}
	}
}

// TestPackedLogStoreAgainstModel runs random appends, compactions,
// truncations and reopenings, comparing with the entries written.
func TestPackedLogStoreAgainstModel(t *testing.T) {
	for seed := int64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			p := openPackTestStore(t, filepath.Join(t.TempDir(), "raft.db"))
			defer p.bolt.Close()
			want := map[uint64]*raft.Log{}
			var first, last, term uint64 = 0, 0, 1
			for step := 0; step < 120; step++ {
				switch op := rng.Intn(10); {
				case op < 5: // append
					n := 1 + rng.Intn(40)
					if rng.Intn(8) == 0 {
						n = 500 + rng.Intn(600) // spans several packs
					}
					var logs []*raft.Log
					for i := 0; i < n; i++ {
						l := testEntry(last+1+uint64(i), term)
						logs = append(logs, l)
						want[l.Index] = l
					}
					if err := p.store.StoreLogs(logs); err != nil {
						t.Fatal(err)
					}
					if first == 0 {
						first = logs[0].Index
					}
					last += uint64(n)
				case op < 7 && last > first: // compact a prefix
					max := first + uint64(rng.Int63n(int64(last-first)))
					if err := p.store.DeleteRange(first, max); err != nil {
						t.Fatal(err)
					}
					first = max + 1
				case op < 9 && last > first: // truncate a suffix, as a follower does
					min := first + 1 + uint64(rng.Int63n(int64(last-first)))
					if err := p.store.DeleteRange(min, last); err != nil {
						t.Fatal(err)
					}
					last = min - 1
					term++
				case op == 9:
					p.reopen()
					// Entries of a pack straddling a compaction come back.
					first, _ = p.store.FirstIndex()
				}
				p.check(want, first, last)
			}
			if err := p.store.DeleteRange(first, last); err != nil {
				t.Fatal(err)
			}
			p.check(want, 0, 0)
			p.reopen()
			p.check(want, 0, 0)
		})
	}
}

// TestPackedLogStoreInterruptedTruncation leaves a truncation half done —
// the shortened pack stored, the old one not yet deleted — and checks the
// log reads as before the truncation and can be truncated again.
func TestPackedLogStoreInterruptedTruncation(t *testing.T) {
	p := openPackTestStore(t, filepath.Join(t.TempDir(), "raft.db"))
	defer p.bolt.Close()
	want := map[uint64]*raft.Log{}
	var logs []*raft.Log
	for i := uint64(1); i <= 100; i++ {
		logs = append(logs, testEntry(i, 1))
		want[i] = logs[i-1]
	}
	if err := p.store.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	// What truncate(60, 100) writes before it deletes.
	short := &raft.Log{Index: 59, Term: 1, Type: packLogType, Data: encodePack(logs[:59])}
	if err := p.bolt.StoreLogs([]*raft.Log{short}); err != nil {
		t.Fatal(err)
	}
	p.reopen()
	p.check(want, 1, 100)
	if err := p.store.DeleteRange(60, 100); err != nil {
		t.Fatal(err)
	}
	p.check(want, 1, 59)
	next := testEntry(60, 2)
	want[60] = next
	if err := p.store.StoreLog(next); err != nil {
		t.Fatal(err)
	}
	p.reopen()
	p.check(want, 1, 60)
}

// TestPackedLogStoreReadsUnpackedRecords opens a log written one entry per
// record, as before packs, and keeps using it.
func TestPackedLogStoreReadsUnpackedRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "raft.db")
	b, err := raftboltdb.NewBoltStore(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint64]*raft.Log{}
	var logs []*raft.Log
	for i := uint64(1); i <= 30; i++ {
		logs = append(logs, testEntry(i, 1))
		want[i] = logs[i-1]
	}
	if err := b.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	b.Close()
	p := openPackTestStore(t, path)
	defer p.bolt.Close()
	p.check(want, 1, 30)
	if err := p.store.DeleteRange(20, 30); err != nil {
		t.Fatal(err)
	}
	more := []*raft.Log{testEntry(20, 2), testEntry(21, 2)}
	want[20], want[21] = more[0], more[1]
	if err := p.store.StoreLogs(more); err != nil {
		t.Fatal(err)
	}
	p.reopen()
	p.check(want, 1, 21)
}

// TestPackedLogStoreOneRecordPerAppend checks what the store is for: an
// append is one bolt record, however many entries it carries.
func TestPackedLogStoreOneRecordPerAppend(t *testing.T) {
	mem := raft.NewInmemStore()
	s, err := NewPackedLogStore(mem)
	if err != nil {
		t.Fatal(err)
	}
	var logs []*raft.Log
	for i := uint64(1); i <= 300; i++ {
		logs = append(logs, testEntry(i, 1))
	}
	if err := s.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	firstKey, _ := mem.FirstIndex()
	lastKey, _ := mem.LastIndex()
	if firstKey != 300 || lastKey != 300 {
		t.Fatalf("records %d-%d, want one record at 300", firstKey, lastKey)
	}
	var l raft.Log
	if err := s.GetLog(123, &l); err != nil || !sameEntry(&l, logs[122]) {
		t.Fatalf("entry 123: %v %+v", err, l)
	}
}

func TestPackCodecRoundTrip(t *testing.T) {
	var logs []*raft.Log
	for i := uint64(40); i < 60; i++ {
		logs = append(logs, testEntry(i, i/10))
	}
	p, err := decodeRecord(&raft.Log{Index: 59, Type: packLogType, Data: encodePack(logs)})
	if err != nil {
		t.Fatal(err)
	}
	if p.first != 40 || len(p.logs) != 20 {
		t.Fatalf("pack %d+%d", p.first, len(p.logs))
	}
	for i := range logs {
		if !sameEntry(&p.logs[i], logs[i]) {
			t.Fatalf("entry %d: %+v want %+v", i, p.logs[i], *logs[i])
		}
	}
	if _, err := decodeRecord(&raft.Log{Index: 58, Type: packLogType, Data: encodePack(logs)}); err == nil {
		t.Fatal("a pack stored under the wrong key decoded")
	}
}

// FuzzDecodePack feeds arbitrary bytes to the pack decoder: errors, never
// a panic or an outsized allocation.
func FuzzDecodePack(f *testing.F) {
	f.Add(uint64(3), encodePack([]*raft.Log{testEntry(1, 1), testEntry(2, 1), testEntry(3, 2)}))
	f.Add(uint64(9), encodePack([]*raft.Log{testEntry(9, 4)}))
	f.Add(uint64(1), []byte{packVersion, 1, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, key uint64, data []byte) {
		p, err := decodeRecord(&raft.Log{Index: key, Type: packLogType, Data: data})
		if err != nil {
			return
		}
		if p.first+uint64(len(p.logs))-1 != key {
			t.Fatalf("pack %d+%d under key %d", p.first, len(p.logs), key)
		}
	})
}
