package ensemble

import (
	"errors"
	"testing"
)

// heldFuture is a Raft future answered once ch is closed: never, for one
// left in Raft's apply queue at shutdown.
type heldFuture struct{ ch chan struct{} }

func (h heldFuture) Error() error { <-h.ch; return nil }

// await returns once the member closes even if Raft never answers.
func TestAwaitReturnsWhenTheMemberCloses(t *testing.T) {
	n := &Node{done: make(chan struct{})}
	f := heldFuture{ch: make(chan struct{})}
	defer close(f.ch)
	close(n.done)
	if err := n.await(f); !errors.Is(err, ErrClosed) {
		t.Fatalf("await = %v, want ErrClosed", err)
	}
	n2 := &Node{done: make(chan struct{})}
	answered := heldFuture{ch: make(chan struct{})}
	close(answered.ch)
	if err := n2.await(answered); err != nil {
		t.Fatalf("await of an answered future = %v", err)
	}
}
