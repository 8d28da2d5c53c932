// Package turns bounds how many costly answers a server makes at once:
// a fixed number of turns, each request taking one and waiting a bounded
// time for it. The AdminServer's large reports (operator) and the
// console's large answers take theirs here, so their memory and CPU stay
// those of a few answers however many are asked for at once.
package turns

import (
	"context"
	"errors"
	"time"
)

// ErrBusy is a turn not free within the wait.
var ErrBusy = errors.New("turns: none free")

// Turns is a set of n turns. The zero value has none; use New.
type Turns struct {
	slots chan struct{}
}

// New returns n turns (at least one).
func New(n int) *Turns { return &Turns{slots: make(chan struct{}, max(n, 1))} }

// Take waits for a turn, up to wait or until ctx ends: nil when it got
// one (give it back with Done), ErrBusy after wait, or ctx's error.
func (t *Turns) Take(ctx context.Context, wait time.Duration) error {
	select {
	case t.slots <- struct{}{}:
		return nil
	default:
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case t.slots <- struct{}{}:
		return nil
	case <-timer.C:
		return ErrBusy
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Done gives back a turn Take gave.
func (t *Turns) Done() { <-t.slots }

// Taken is how many turns are held now.
func (t *Turns) Taken() int { return len(t.slots) }
