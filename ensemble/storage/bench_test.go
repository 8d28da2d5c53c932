package storage

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"
)

// The cost of the checksums: the pack codec (a CRC-32C over every pack),
// the journal's appends and the packed bolt log's stores. Run before and
// after a change to this package:
//
//	go test -run '^$' -bench 'Pack|Journal|Packed' -benchmem -count 5 ./ensemble/storage/

// benchLogs is n consecutive entries from first with size-byte values.
func benchLogs(first uint64, n, size int) []*raft.Log {
	logs := make([]*raft.Log, n)
	for i := range logs {
		logs[i] = &raft.Log{Index: first + uint64(i), Term: 1, Type: raft.LogCommand, Data: bytes.Repeat([]byte{byte(i)}, size)}
	}
	return logs
}

// BenchmarkPackCodec encodes and decodes one pack of 64 entries.
func BenchmarkPackCodec(b *testing.B) {
	for _, size := range []int{100, 1024, 16 << 10} {
		b.Run(fmt.Sprintf("value=%d", size), func(b *testing.B) {
			logs := benchLogs(1, 64, size)
			var buf []byte
			b.SetBytes(int64(64 * size))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				buf = appendPack(buf[:0], logs)
				if _, err := decodeRecord(&raft.Log{Index: 64, Type: packLogType, Data: buf}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkJournalAppend appends batches of 16 entries to the journal,
// unsynced (the CPU cost alone) and synced (what a member pays).
func BenchmarkJournalAppend(b *testing.B) {
	for _, sync := range []bool{false, true} {
		for _, size := range []int{100, 1024} {
			b.Run(fmt.Sprintf("sync=%v/value=%d", sync, size), func(b *testing.B) {
				j, err := OpenJournal(filepath.Join(b.TempDir(), JournalFile), 64<<20, &discardStore{LogStore: raft.NewInmemStore()}, nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				defer j.Close()
				j.NoSync = !sync
				b.SetBytes(int64(16 * size))
				b.ResetTimer()
				next := uint64(1)
				for i := 0; i < b.N; i++ {
					if err := j.StoreLogs(benchLogs(next, 16, size)); err != nil {
						b.Fatal(err)
					}
					next += 16
				}
			})
		}
	}
}

// BenchmarkPackedStore stores batches of 256 entries into a packed bolt
// log (bolt's syncs off: the encoding and the B+tree, not the disk).
func BenchmarkPackedStore(b *testing.B) {
	for _, size := range []int{100, 1024} {
		b.Run(fmt.Sprintf("value=%d", size), func(b *testing.B) {
			db, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(b.TempDir(), LogStoreFile),
				BoltOptions: &bbolt.Options{NoSync: true, NoFreelistSync: true, FreelistType: bbolt.FreelistMapType}})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			s, err := NewPackedLogStore(ChunkedLogStore{db})
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(256 * size))
			b.ResetTimer()
			next := uint64(1)
			for i := 0; i < b.N; i++ {
				if err := s.StoreLogs(benchLogs(next, 256, size)); err != nil {
					b.Fatal(err)
				}
				next += 256
			}
		})
	}
}
