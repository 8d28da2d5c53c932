package zklearner

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// TestSyncNotSentLeavesNoWaiter: a Sync that could not be sent (no leader
// followed yet) must not stay queued, or the leader's answer to the next
// Sync would complete it instead and the next one would wait forever.
func TestSyncNotSentLeavesNoWaiter(t *testing.T) {
	l := New(Config{SyncTimeout: time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := l.Sync(ctx, 1, 1, "/"); !errors.Is(err, ErrNotSynced) {
		t.Fatalf("Sync before following: %v, want ErrNotSynced", err)
	}
	if ok, err := l.Revalidate(ctx, 7, 1000); ok || !errors.Is(err, ErrNotSynced) {
		t.Fatalf("Revalidate before following: %v %v, want ErrNotSynced", ok, err)
	}
	if n := len(l.fw.revalidations); n != 0 {
		t.Errorf("%d revalidations left waiting after a failed send", n)
	}

	// Now synced with a "leader" that reads everything sent to it.
	here, leader := net.Pipe()
	defer here.Close()
	defer leader.Close()
	go func() { _, _ = io.Copy(io.Discard, leader) }()
	l.mu.Lock()
	l.cur = &conn{l: l, nc: here, out: bufio.NewWriter(here)}
	l.mu.Unlock()

	done := make(chan error, 1)
	go func() { done <- l.Sync(ctx, 1, 2, "/") }()
	// The leader's SYNC arrives once the request is queued.
	for {
		l.fw.mu.Lock()
		n := len(l.fw.syncs)
		l.fw.mu.Unlock()
		if n > 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	l.fw.synced()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the leader's SYNC went to a Sync that was never sent: this one still waits")
	}
}
