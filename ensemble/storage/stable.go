package storage

import (
	"fmt"
	"runtime"

	"github.com/hashicorp/raft"
)

// FailStopStable is Raft's stable store (its current term and vote, in
// raft.db) with a failed write stopping the member before Raft sees it.
//
// hashicorp/raft panics when it cannot save its term ("failed to save
// current term"), crashing the process mid-write with a stack trace
// instead of the cause; going on instead would let the member vote twice
// in a term after a restart. So a failed Set or SetUint64 calls fail
// (Node.fatal: log the cause, fail every waiting proposal, exit) and then
// ends the calling goroutine with runtime.Goexit, which runs its defers:
// Raft's goroutines are started through a wrapper that marks them done
// in a defer, so a Shutdown still completes, and the call that could not
// be made durable never returns to Raft. Use it only as the store given to
// raft.NewRaft, whose goroutines are its only callers.
type FailStopStable struct {
	raft.StableStore
	fail func(error)
}

// NewFailStopStable wraps inner; fail is called with every write error.
func NewFailStopStable(inner raft.StableStore, fail func(error)) *FailStopStable {
	return &FailStopStable{StableStore: inner, fail: fail}
}

// Set implements raft.StableStore.
func (s *FailStopStable) Set(key, val []byte) error {
	if err := s.StableStore.Set(key, val); err != nil {
		s.stop(key, err)
	}
	return nil
}

// SetUint64 implements raft.StableStore.
func (s *FailStopStable) SetUint64(key []byte, val uint64) error {
	if err := s.StableStore.SetUint64(key, val); err != nil {
		s.stop(key, err)
	}
	return nil
}

// stop reports a failed write and ends the calling goroutine.
func (s *FailStopStable) stop(key []byte, err error) {
	s.fail(fmt.Errorf("storage: save Raft's %s in %s: %w", key, LogStoreFile, err))
	runtime.Goexit()
}
