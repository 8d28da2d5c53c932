package ensemble

import (
	"errors"
	"testing"
	"time"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/internal/testing/testport"
)

// A member whose ensemble has not formed (the others are not up) gives up
// waiting for a leader when told to (SIGTERM before the ensemble formed:
// the process used to ignore it and wait on).
func TestOpenWaitingForALeaderCanBeCancelled(t *testing.T) {
	var peers []backend.Peer
	for i := int64(1); i <= 3; i++ {
		addr, err := testport.Addr()
		if err != nil {
			t.Fatal(err)
		}
		peers = append(peers, backend.Peer{ID: i, Addr: addr})
	}
	cancel := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		n, err := Open(Config{ID: 1, DataDir: t.TempDir(), TickTime: 100 * time.Millisecond, Peers: peers, Cancel: cancel,
			JournalSize: 256 << 10})
		if n != nil {
			n.Close()
		}
		done <- err
	}()
	time.Sleep(500 * time.Millisecond)
	close(cancel)
	select {
	case err := <-done:
		if !errors.Is(err, ErrStartCancelled) {
			t.Fatalf("Open: %v, want ErrStartCancelled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Open still waiting for a leader 10s after it was cancelled")
	}
}
