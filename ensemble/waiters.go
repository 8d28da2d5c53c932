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
}

func newWaiters() *waiters { return &waiters{m: make(map[uint64]backend.Waiter)} }

func (w *waiters) put(origin uint64, x backend.Waiter) {
	w.mu.Lock()
	w.m[origin] = x
	w.mu.Unlock()
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
