package session

import (
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// Returning memory after large replies. A connection drops a reply buffer
// larger than retainBufferSize once it is written, but the collector runs
// only when the heap has grown by its headroom (internal/base/gctune allows up
// to 128 MiB of garbage), and the runtime hands freed pages back to the
// OS slowly: after a burst of large replies the member would stay that
// much larger for minutes. So once reclaimThreshold bytes of such buffers
// have been allocated (each is garbage once written), the next connection
// to close returns the memory at once (debug.FreeOSMemory), at most once
// per reclaimInterval. The same is done after a burst of connections went
// idle and were parked (reclaimParked more than ever since the last time):
// the stacks their goroutines no longer need, and the garbage of the
// handshakes, would otherwise stay resident too.
const (
	reclaimThreshold = 64 << 20
	reclaimInterval  = 10 * time.Second
	reclaimParked    = 4096
)

// reclaimer decides when to return freed memory to the OS.
type reclaimer struct {
	dropped atomic.Int64 // bytes of large buffers allocated since the last reclaim
	mu      sync.Mutex
	last    time.Time // the last reclaim
	pending bool      // a reclaim is scheduled
	runs    atomic.Int64
}

// noteAllocated counts a large reply buffer allocated.
func (r *reclaimer) noteAllocated(n int) { r.dropped.Add(int64(n)) }

// connClosed schedules a reclaim if enough was dropped: a second after the
// close (others of a group of connections closing together are gone by
// then), and no sooner than reclaimInterval after the last one.
func (r *reclaimer) connClosed() {
	if r.dropped.Load() < reclaimThreshold {
		return
	}
	r.schedule()
}

// schedule returns freed memory to the OS a second from now, or
// reclaimInterval after the last time, unless that is already planned.
func (r *reclaimer) schedule() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending {
		return
	}
	r.pending = true
	delay := time.Second
	if next := time.Until(r.last.Add(reclaimInterval)); next > delay {
		delay = next
	}
	time.AfterFunc(delay, r.reclaim)
}

func (r *reclaimer) reclaim() {
	r.dropped.Store(0)
	debug.FreeOSMemory()
	r.runs.Add(1)
	r.mu.Lock()
	r.last, r.pending = time.Now(), false
	r.mu.Unlock()
}
