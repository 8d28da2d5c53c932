package netguard

import (
	"maps"
	"sync"
	"sync/atomic"
)

// Rejections counts the connections a process refused and the accepts
// that failed, in all (mntr's zk_connection_rejected, ZooKeeper's
// ServerMetrics.CONNECTION_REJECTED, which counts both) and by listener.
// One is shared by every listener of a process. Its zero value is ready to
// use; it is safe for concurrent use, and its methods do nothing on a nil
// *Rejections.
type Rejections struct {
	total atomic.Int64

	mu sync.Mutex
	by map[string]int64 // by listener name; guarded by mu
}

// Add counts one refused connection or failed accept on listener.
func (r *Rejections) Add(listener string) {
	if r == nil {
		return
	}
	r.total.Add(1)
	r.mu.Lock()
	if r.by == nil {
		r.by = make(map[string]int64)
	}
	r.by[listener]++
	r.mu.Unlock()
}

// Total is the count over every listener since the start.
func (r *Rejections) Total() int64 {
	if r == nil {
		return 0
	}
	return r.total.Load()
}

// ByListener returns the counts by listener name (a copy).
func (r *Rejections) ByListener() map[string]int64 {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.by)
}
