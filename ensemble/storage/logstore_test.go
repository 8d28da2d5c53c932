package storage

import (
	"testing"

	"github.com/hashicorp/raft"
)

func TestChunkedDeleteRangeCoversTheRangeInChunks(t *testing.T) {
	mem := raft.NewInmemStore()
	var logs []*raft.Log
	for i := uint64(1); i <= 12345; i++ {
		logs = append(logs, &raft.Log{Index: i, Data: []byte{1}})
	}
	if err := mem.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	rec := &recordingStore{LogStore: mem}
	if err := (ChunkedLogStore{rec}).DeleteRange(3, 12000); err != nil {
		t.Fatal(err)
	}
	if len(rec.calls) != 3 || rec.calls[0] != [2]uint64{3, 5002} || rec.calls[2] != [2]uint64{10003, 12000} {
		t.Fatalf("chunks %v", rec.calls)
	}
	first, _ := mem.FirstIndex()
	if first != 1 {
		t.Fatalf("first index %d", first)
	}
	var l raft.Log
	if err := mem.GetLog(12000, &l); err == nil {
		t.Fatal("entry 12000 survived")
	}
	if err := mem.GetLog(12001, &l); err != nil {
		t.Fatal("entry 12001 deleted")
	}
}

type recordingStore struct {
	raft.LogStore
	calls [][2]uint64
}

func (r *recordingStore) DeleteRange(min, max uint64) error {
	r.calls = append(r.calls, [2]uint64{min, max})
	return r.LogStore.DeleteRange(min, max)
}
