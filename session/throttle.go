package session

import (
	"sync"
	"sync/atomic"
)

// DefaultOutstandingLimit is ZooKeeper's default globalOutstandingLimit.
const DefaultOutstandingLimit = 1000

// throttle is ZooKeeper's globalOutstandingLimit. Once more writes than
// the limit are in flight on this member (proposed, not yet applied), a
// connection with writes of its own in flight stops reading until the
// total is back within the limit or its own writes are done; TCP then
// holds its client back. Without it a client pipelining writes faster
// than the ensemble commits them grows the member's queues without bound,
// and a follower so loaded falls behind its leader until it must be sent
// a snapshot, which drops every session on it.
type throttle struct {
	limit   int64        // 0: no limit
	waiting atomic.Int32 // readers held
	stalls  atomic.Int64 // times a reader was held
	mu      sync.Mutex
	cond    sync.Cond
}

func (t *throttle) init(limit int) {
	t.cond.L = &t.mu
	if limit > 0 {
		t.limit = int64(limit)
	}
}

// wakeAll lets every held reader look again.
func (t *throttle) wakeAll() {
	t.mu.Lock()
	t.cond.Broadcast()
	t.mu.Unlock()
}

// overLimit reports whether more writes than the limit are in flight.
func (s *Server) overLimit() bool {
	return s.thr.limit > 0 && s.stats.outstanding.Load() > s.thr.limit
}

// holdReads blocks c's reader while the member is over its limit and c
// has writes in flight (ZooKeeper's disableRecv); it returns at once
// otherwise.
func (c *conn) holdReads() {
	s := c.srv
	if !s.overLimit() {
		return
	}
	t := &s.thr
	t.stalls.Add(1)
	t.waiting.Add(1)
	t.mu.Lock()
	for s.overLimit() && c.hasPending() && !c.out.isDead() {
		t.cond.Wait()
	}
	t.mu.Unlock()
	t.waiting.Add(-1)
}

// writeDone counts one of c's writes finished and wakes the held readers
// if one of them may go on: the member is back within its limit, or c
// (whose reader may be held) has nothing in flight any more.
func (c *conn) writeDone() {
	s := c.srv
	s.stats.outstanding.Add(-1)
	if s.thr.waiting.Load() == 0 || (s.overLimit() && c.hasPending()) {
		return
	}
	s.thr.wakeAll()
}

// hasPending reports whether c has writes in flight.
func (c *conn) hasPending() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending) > 0
}
