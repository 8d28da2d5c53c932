package storage

import (
	"bytes"
	"testing"

	"github.com/hashicorp/raft"
)

// countingStore counts GetLog calls that reach the store.
type countingStore struct {
	raft.LogStore
	gets int
}

func (s *countingStore) GetLog(idx uint64, l *raft.Log) error {
	s.gets++
	return s.LogStore.GetLog(idx, l)
}

func sizedLogs(first, n uint64, size int) []*raft.Log {
	logs := make([]*raft.Log, n)
	for i := range logs {
		idx := first + uint64(i)
		logs[i] = &raft.Log{Index: idx, Term: 1, Data: bytes.Repeat([]byte{byte(idx)}, size)}
	}
	return logs
}

// cached reports which of first..last the cache answers without the store.
func cached(t *testing.T, c *LogCache, s *countingStore, first, last uint64) []uint64 {
	t.Helper()
	var hits []uint64
	for idx := first; idx <= last; idx++ {
		before := s.gets
		var l raft.Log
		if err := c.GetLog(idx, &l); err != nil {
			t.Fatalf("entry %d: %v", idx, err)
		}
		if l.Index != idx || len(l.Data) == 0 || l.Data[0] != byte(idx) {
			t.Fatalf("entry %d read back as %d", idx, l.Index)
		}
		if s.gets == before {
			hits = append(hits, idx)
		}
	}
	return hits
}

// TestLogCacheBounds: the cache keeps the newest entries within both its
// count and its byte bound, and every entry reads back, cached or not.
func TestLogCacheBounds(t *testing.T) {
	s := &countingStore{LogStore: raft.NewInmemStore()}
	c, err := NewLogCache(s, 8, 1000)
	if err != nil {
		t.Fatal(err)
	}
	// Small entries: the count bound holds the last 8.
	for i := uint64(0); i < 4; i++ {
		mustStore(t, c, sizedLogs(1+i*5, 5, 10))
	}
	if hits := cached(t, c, s, 1, 20); len(hits) != 8 || hits[0] != 13 || hits[7] != 20 {
		t.Fatalf("small entries: cached %v, want 13..20", hits)
	}
	if c.bytes != 80 {
		t.Fatalf("bytes %d, want 80", c.bytes)
	}
	// Large entries: the byte bound holds the last 3 of 300 bytes.
	mustStore(t, c, sizedLogs(21, 6, 300))
	if hits := cached(t, c, s, 1, 26); len(hits) != 3 || hits[0] != 24 || hits[2] != 26 {
		t.Fatalf("large entries: cached %v, want 24..26", hits)
	}
	if c.bytes != 900 {
		t.Fatalf("bytes %d, want 900", c.bytes)
	}
	// One entry above the bound is still cached alone (the newest).
	mustStore(t, c, sizedLogs(27, 1, 5000))
	if hits := cached(t, c, s, 24, 27); len(hits) != 1 || hits[0] != 27 {
		t.Fatalf("oversized entry: cached %v, want 27", hits)
	}
	// A truncation starts the cache over.
	if err := c.DeleteRange(20, 27); err != nil {
		t.Fatal(err)
	}
	if c.bytes != 0 || c.lo <= c.hi {
		t.Fatalf("after DeleteRange: bytes %d, range %d..%d", c.bytes, c.lo, c.hi)
	}
	mustStore(t, c, sizedLogs(20, 2, 10))
	if hits := cached(t, c, s, 20, 21); len(hits) != 2 {
		t.Fatalf("after truncation: cached %v, want 20..21", hits)
	}
	if c.IsMonotonic() {
		t.Fatal("monotonic over a store that is not")
	}
}
