package ensemble

import (
	"sync"

	"github.com/zkraft/zkraft/backend"
)

// waiters maps the origin tags of this member's in-flight proposals to the
// requests awaiting them.
type waiters struct {
	mu sync.Mutex
	m  map[uint64]backend.Waiter
	// stopped, once set, is what every later put reports at once: the
	// member applies nothing more, so nothing would ever complete it.
	stopped error
}

func newWaiters() *waiters { return &waiters{m: make(map[uint64]backend.Waiter)} }

// put registers x for origin and reports true, or, once the member has
// stopped (see stop), fails x at once and reports false.
func (w *waiters) put(origin uint64, x backend.Waiter) bool {
	w.mu.Lock()
	err := w.stopped
	if err == nil {
		w.m[origin] = x
	}
	w.mu.Unlock()
	if err != nil {
		x.Failed(err)
		return false
	}
	return true
}

// take removes and returns the waiter for origin, or nil.
func (w *waiters) take(origin uint64) backend.Waiter {
	if origin == 0 {
		return nil
	}
	w.mu.Lock()
	x, ok := w.m[origin]
	if ok {
		delete(w.m, origin)
	}
	w.mu.Unlock()
	return x
}

// has reports whether a waiter is registered for origin.
func (w *waiters) has(origin uint64) bool {
	w.mu.Lock()
	_, ok := w.m[origin]
	w.mu.Unlock()
	return ok
}

// failAll removes every waiter and reports err to each. A member that
// replaces its state with a snapshot never applies the entries the snapshot
// covers, so their waiters would otherwise wait forever; their outcome is
// unknown, as after a lost connection.
func (w *waiters) failAll(err error) {
	w.mu.Lock()
	m := w.m
	w.m = make(map[uint64]backend.Waiter)
	w.mu.Unlock()
	for _, x := range m {
		x.Failed(err)
	}
}

// stop fails every waiter with err, as failAll, and every waiter put
// after it: the member has stopped applying (closed, or halted at an
// entry it cannot apply), so a proposal made from now on would wait
// forever.
func (w *waiters) stop(err error) {
	w.mu.Lock()
	if w.stopped == nil {
		w.stopped = err
	}
	w.mu.Unlock()
	w.failAll(err)
}
