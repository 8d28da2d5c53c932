package storage

import (
	"fmt"
	"sync"

	"github.com/hashicorp/raft"
)

// LogCache keeps the most recent log entries in memory for the leader's
// replication and the FSM, as raft.LogCache does, but bounded by bytes as
// well as by count: raft.LogCache holds its last N entries whatever their
// size, so with 1 MB values (jute.maxbuffer) 1024 of them pinned a
// gigabyte, whose collection stalled the member long enough to lose its
// leadership. Entries beyond either bound are read from the store.
type LogCache struct {
	store raft.LogStore

	mu       sync.RWMutex
	ring     []*raft.Log // by index modulo len
	lo, hi   uint64      // cached indexes are within [lo, hi]; lo > hi when empty
	bytes    int         // Data and Extensions of the cached entries
	maxBytes int
}

var (
	_ raft.LogStore          = (*LogCache)(nil)
	_ raft.MonotonicLogStore = (*LogCache)(nil)
)

// The log cache's bounds: 1024 entries (raft.LogCache's usual size; a
// second or two of small writes) or 32 MiB, whichever is reached first.
const (
	LogCacheEntries = 1024
	LogCacheBytes   = 32 << 20
)

// NewLogCache caches up to entries entries and maxBytes bytes of store.
func NewLogCache(store raft.LogStore, entries, maxBytes int) (*LogCache, error) {
	if entries <= 0 || maxBytes <= 0 {
		return nil, fmt.Errorf("storage: log cache bounds must be positive")
	}
	return &LogCache{store: store, ring: make([]*raft.Log, entries), lo: 1, maxBytes: maxBytes}, nil
}

func logBytes(l *raft.Log) int { return len(l.Data) + len(l.Extensions) }

// IsMonotonic implements raft.MonotonicLogStore: as the store.
func (c *LogCache) IsMonotonic() bool {
	m, ok := c.store.(raft.MonotonicLogStore)
	return ok && m.IsMonotonic()
}

// GetLog implements raft.LogStore.
func (c *LogCache) GetLog(idx uint64, log *raft.Log) error {
	c.mu.RLock()
	cached := c.ring[idx%uint64(len(c.ring))]
	c.mu.RUnlock()
	if cached != nil && cached.Index == idx {
		*log = *cached
		return nil
	}
	return c.store.GetLog(idx, log)
}

// StoreLog implements raft.LogStore.
func (c *LogCache) StoreLog(log *raft.Log) error { return c.StoreLogs([]*raft.Log{log}) }

// StoreLogs implements raft.LogStore: the store first, then the cache.
func (c *LogCache) StoreLogs(logs []*raft.Log) error {
	if err := c.store.StoreLogs(logs); err != nil {
		return fmt.Errorf("storage: store logs: %w", err)
	}
	if len(logs) == 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lo <= c.hi && logs[0].Index != c.hi+1 {
		c.resetLocked() // not a continuation (Raft rewrote a suffix): start over
	}
	n := uint64(len(c.ring))
	for _, l := range logs {
		if c.lo > c.hi {
			c.lo, c.hi = l.Index, l.Index-1
		}
		if l.Index >= c.lo+n { // the slot still holds the entry n back
			c.evictLocked()
		}
		c.ring[l.Index%n] = l
		c.hi = l.Index
		c.bytes += logBytes(l)
		for c.bytes > c.maxBytes && c.lo < c.hi {
			c.evictLocked()
		}
	}
	return nil
}

// evictLocked drops the oldest cached entry.
func (c *LogCache) evictLocked() {
	slot := c.lo % uint64(len(c.ring))
	if l := c.ring[slot]; l != nil && l.Index == c.lo {
		c.bytes -= logBytes(l)
		c.ring[slot] = nil
	}
	c.lo++
}

func (c *LogCache) resetLocked() {
	clear(c.ring)
	c.lo, c.hi, c.bytes = 1, 0, 0
}

// FirstIndex implements raft.LogStore.
func (c *LogCache) FirstIndex() (uint64, error) { return c.store.FirstIndex() }

// LastIndex implements raft.LogStore.
func (c *LogCache) LastIndex() (uint64, error) { return c.store.LastIndex() }

// DeleteRange implements raft.LogStore; the cache starts over, as
// raft.LogCache's does.
func (c *LogCache) DeleteRange(min, max uint64) error {
	c.mu.Lock()
	c.resetLocked()
	c.mu.Unlock()
	return c.store.DeleteRange(min, max)
}
