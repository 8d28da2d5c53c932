package ensemble

import (
	"errors"
	"testing"
)

// unanswered is a Raft future Raft never answers, as one left in its apply
// queue at shutdown.
type unanswered struct{ ch chan struct{} }

func (u unanswered) Error() error { <-u.ch; return nil }

// await returns once the member closes even if Raft never answers.
func TestAwaitReturnsWhenTheMemberCloses(t *testing.T) {
	n := &Node{done: make(chan struct{})}
	f := unanswered{ch: make(chan struct{})}
	defer close(f.ch)
	close(n.done)
	if err := n.await(f); !errors.Is(err, ErrClosed) {
		t.Fatalf("await = %v, want ErrClosed", err)
	}
	n2 := &Node{done: make(chan struct{})}
	answered := unanswered{ch: make(chan struct{})}
	close(answered.ch)
	if err := n2.await(answered); err != nil {
		t.Fatalf("await of an answered future = %v", err)
	}
}
