package learner

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/zookeeper/datadir"
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
	l.fw.synced(nil)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the leader's SYNC went to a Sync that was never sent: this one still waits")
	}
}

// TestRevalidateTwiceForOneSession: two REVALIDATEs of one session in
// flight (two clients bringing it at once) each get an answer; the
// second no longer takes the first one's place, leaving it to wait for
// its context.
func TestRevalidateTwiceForOneSession(t *testing.T) {
	l := New(Config{SyncTimeout: time.Second})
	here, leader := net.Pipe()
	defer here.Close()
	defer leader.Close()
	// The leader reads the REVALIDATEs as they come.
	got := make(chan packet, 2)
	go func() {
		in := datadir.NewStreamReader(bufio.NewReader(leader))
		for {
			p, err := readPacket(in)
			if err != nil {
				return
			}
			got <- p
		}
	}()
	l.mu.Lock()
	l.cur = &conn{l: l, nc: here, out: bufio.NewWriter(here)}
	l.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	type answer struct {
		ok  bool
		err error
	}
	answers := make(chan answer, 2)
	for range 2 {
		go func() {
			ok, err := l.Revalidate(ctx, 7, 1000)
			answers <- answer{ok, err}
		}()
	}
	for range 2 {
		if p := <-got; p.typ != pktRevalidate {
			t.Fatalf("the leader got packet type %d, want REVALIDATE", p.typ)
		}
	}
	// Both sent: the leader answers each, valid.
	reply := append(binary.BigEndian.AppendUint64(nil, 7), 1)
	for range 2 {
		if err := l.fw.revalidated(reply); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if a := <-answers; !a.ok || a.err != nil {
			t.Errorf("revalidation: %v %v, want valid", a.ok, a.err)
		}
	}
}
