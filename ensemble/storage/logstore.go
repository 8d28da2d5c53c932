package storage

import (
	"fmt"

	"github.com/hashicorp/raft"
)

// deleteChunk is how many log entries one compaction transaction deletes.
const deleteChunk = 5000

// ChunkedLogStore is raft-boltdb's log store with log compaction split into
// short transactions. bolt has one writer at a time, so a single
// transaction deleting a whole snapshot's worth of entries would hold up
// the leader's appends (every client write) for its whole duration;
// chunks let the appends run in between.
type ChunkedLogStore struct {
	raft.LogStore
}

// DeleteRange implements raft.LogStore.
func (s ChunkedLogStore) DeleteRange(min, max uint64) error {
	for lo := min; lo <= max; lo += deleteChunk {
		hi := lo + deleteChunk - 1
		if hi > max || hi < lo {
			hi = max
		}
		if err := s.LogStore.DeleteRange(lo, hi); err != nil {
			return fmt.Errorf("storage: compact log %d-%d: %w", lo, hi, err)
		}
		if hi == max {
			break
		}
	}
	return nil
}
