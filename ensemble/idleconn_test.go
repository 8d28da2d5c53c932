package ensemble

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// newTestMux serves a mux on a fresh loopback port whose streams time out
// after idle.
func newTestMux(t *testing.T, idle time.Duration) (*mux, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := newMux(ln, defaultDialer, nil)
	m.idle.Store(int64(idle))
	t.Cleanup(m.close)
	return m, ln.Addr().String()
}

// TestSilentMemberStreamIsClosed: a stream past its hello that sends
// nothing is closed after the member's idle limit, one that keeps sending
// stays open, and a level-1 member's stream is not timed.
func TestSilentMemberStreamIsClosed(t *testing.T) {
	const idle = 400 * time.Millisecond
	server, addr := newTestMux(t, idle)
	client, _ := newTestMux(t, idle)

	silent, err := client.open(addr, streamFwd, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	served := <-server.fwdCh
	if _, ok := served.(*idleConn); !ok {
		t.Fatalf("a level-2 stream is served as %T, not timed", served)
	}
	ended := make(chan error, 1)
	go func(c net.Conn) { _, err := io.Copy(io.Discard, c); ended <- err }(served)
	select {
	case err := <-ended:
		if !timedOut(err) {
			t.Fatalf("the silent stream ended with %v, not its idle limit", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a silent member stream is still open")
	}
	served.Close()
	if _, err := silent.Read(make([]byte, 1)); err == nil {
		t.Fatal("the silent peer's side is still open")
	}

	// A stream that sends every idle/8 is never closed.
	busy, err := client.open(addr, streamFwd, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	served = <-server.fwdCh
	defer served.Close()
	go func(c net.Conn) { _, err := io.Copy(io.Discard, c); ended <- err }(served)
	for end := time.Now().Add(4 * idle); time.Now().Before(end); time.Sleep(idle / 8) {
		if _, err := busy.Write([]byte{0}); err != nil {
			t.Fatalf("a busy stream was closed: %v", err)
		}
	}
	select {
	case err := <-ended:
		t.Fatalf("a busy stream ended: %v", err)
	default:
	}

	// A level-1 member's stream (header version 1, no hello).
	legacy, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer legacy.Close()
	if _, err := legacy.Write([]byte{peerMagic[0], peerMagic[1], peerMagic[2], peerVersionLegacy, streamFwd}); err != nil {
		t.Fatal(err)
	}
	served = <-server.fwdCh
	defer served.Close()
	if _, ok := served.(*idleConn); ok {
		t.Fatal("a level-1 member's stream is timed: it does not retire its own")
	}
}

// TestRetiringConnRefusesAStaleWrite: a dialed stream quiet for its limit
// refuses the next write as a broken connection, so that oncePooled sends
// the RPC on a new one, and closes; reads and writes keep it fresh.
func TestRetiringConnRefusesAStaleWrite(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	go func() { _, _ = io.Copy(b, b) }() // echo
	const after = 200 * time.Millisecond
	c := newRetiringConn(a, after)
	buf := make([]byte, 1)
	for range 4 {
		time.Sleep(after / 2)
		if _, err := c.Write([]byte{1}); err != nil {
			t.Fatalf("a fresh stream refused a write: %v", err)
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(2 * after)
	_, err := c.Write([]byte{1})
	if !errors.Is(err, errRetired) || !brokenConn(err) {
		t.Fatalf("a stale write got %v, want errRetired as a broken connection", err)
	}
	if closedByPeer(err) {
		t.Fatal("a retired stream counts as the member gone")
	}
	if _, err := a.Read(buf); !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("the retired stream is not closed: %v", err)
	}
}

// TestPooledAppendStreamRetiresBeforeTheMemberTimesItOut: an append
// stream left in the pool longer than the member's idle limit is closed
// by the leader's side first, and the member is not counted gone (which
// would make the leader doubt its quorum).
func TestPooledAppendStreamRetiresBeforeTheMemberTimesItOut(t *testing.T) {
	const idle = 400 * time.Millisecond
	sender, _ := newTestAppendTransport(t, nil)
	receiver, addr := newTestAppendTransport(t, nil)
	sender.mux.idle.Store(int64(idle))
	receiver.mux.idle.Store(int64(idle))
	go func() {
		for rpc := range receiver.Consumer() {
			rpc.Respond(&raft.AppendEntriesResponse{Term: 7, Success: true}, nil)
		}
	}()
	if err := sender.AppendEntries("2", addr, sampleAppendRequest(0, 1), new(raft.AppendEntriesResponse)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * idle)
	select {
	case <-sender.contactLost:
		t.Fatal("a pooled stream's idle limit counted the member gone")
	default:
	}
	if closed := sender.contactOf(addr).closed.Load(); closed != 0 {
		t.Fatal("the member is noted gone")
	}
	sender.mu.Lock()
	pooled := len(sender.pool[addr])
	sender.mu.Unlock()
	if pooled != 0 {
		t.Fatalf("%d streams quiet for twice their limit are still pooled", pooled)
	}
	if err := sender.AppendEntries("2", addr, sampleAppendRequest(1, 1), new(raft.AppendEntriesResponse)); err != nil {
		t.Fatalf("append after the pool retired its stream: %v", err)
	}
}

// TestForwardingStreamKeptAlive: a follower's forwarding connection that
// carries no requests for longer than the leader's idle limit is kept open
// by its keepalive, and a write forwarded after that goes through on it.
func TestForwardingStreamKeptAlive(t *testing.T) {
	const idle = 600 * time.Millisecond
	c := newCluster(t, 3, func(cfg *Config) { cfg.memberIdle = idle })
	f := c.follower()
	mustPropose(t, f, newSession(1, 30000))
	f.fwd.mu.Lock()
	before := f.fwd.conn
	f.fwd.mu.Unlock()
	if before == nil {
		t.Fatal("the follower forwarded without a connection")
	}
	time.Sleep(5 * idle)
	f.fwd.mu.Lock()
	after := f.fwd.conn
	f.fwd.mu.Unlock()
	if after != before {
		t.Fatal("the quiet forwarding connection was closed")
	}
	mustPropose(t, f, createTxn(1, "/after-idle", 0, time.Now().UnixMilli()))
	for _, n := range c.nodes {
		if n.IsLeader() {
			for _, m := range c.nodes {
				if m != n {
					if closed := n.trans.contactOf(raft.ServerAddress(m.mux.ln.Addr().String())).closed.Load(); closed != 0 {
						t.Errorf("the leader counted member %d gone in a quiet ensemble", m.ID())
					}
				}
			}
		}
	}
}
