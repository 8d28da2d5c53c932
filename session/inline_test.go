package session

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// tcpPair returns both ends of a loopback TCP connection (endHold's
// inline write needs a plain socket).
func tcpPair(t *testing.T) (server, client net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	if server == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return server, client
}

func (o *outbound) isWriting() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.writing
}

// TestEndHoldWritesOnTheReadersGoroutine checks that a read's reply,
// queued while the reader holds the outbound buffer, is written by the
// reader itself, before endHold returns, when it has nothing more
// buffered: no writer goroutine is started for one reply, and a write
// deadline that passed since the last write does not refuse it. A watch
// event queued meanwhile goes out with it, in order.
func TestEndHoldWritesOnTheReadersGoroutine(t *testing.T) {
	server, client := tcpPair(t)
	o := newOutbound(nil)
	startWriter(t, o, server, 100*time.Millisecond)

	// A reply through the writer goroutine sets the socket's write
	// deadline; the inline write comes after it has passed, as a lone
	// client's next read does after a pause.
	o.reply(0, 1, jute.OK, nil)
	_ = client.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(client, make([]byte, 20)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)

	o.hold()
	o.reply(1, 1, jute.OK, &jute.GetDataResponse{Data: []byte("reply")})
	o.reply(jute.XidNotification, 2, jute.OK, &jute.WatcherEvent{Type: jute.EventNodeDataChanged, Path: "/event"})
	if o.isWriting() {
		t.Fatal("a writer goroutine was started while the reader held the buffer")
	}
	o.endHold(false)
	// Written by now: the client's socket holds both frames.
	_ = client.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	got, _ := io.ReadAll(io.LimitReader(client, 1<<10))
	if i, j := bytes.Index(got, []byte("reply")), bytes.Index(got, []byte("/event")); i < 0 || j < i {
		t.Fatalf("endHold did not write the reply and then the event itself: got %q", got)
	}
	if o.isWriting() {
		t.Fatal("the inline write left the writer flag set")
	}
}

// TestEndHoldNeverWaitsForTheClient checks that the reader's inline
// write never blocks: with more requests buffered it leaves the reply to
// the writer goroutine, and a reply larger than the socket takes at once
// (a client that is not reading) goes out in part, the writer goroutine
// finishing it in order once the client reads.
func TestEndHoldNeverWaitsForTheClient(t *testing.T) {
	server, client := tcpPair(t)
	// Small socket buffers (no autotuning): a reply of a few MiB cannot
	// fit in them.
	if err := server.(*net.TCPConn).SetWriteBuffer(64 << 10); err != nil {
		t.Fatal(err)
	}
	if err := client.(*net.TCPConn).SetReadBuffer(64 << 10); err != nil {
		t.Fatal(err)
	}
	o := newOutbound(nil)
	startWriter(t, o, server, 30*time.Second)

	returns := func(what string, f func()) {
		t.Helper()
		done := make(chan struct{})
		go func() { f(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("endHold blocked (%s)", what)
		}
	}

	// More requests buffered: the writer goroutine takes the reply.
	o.hold()
	o.reply(1, 1, jute.OK, &jute.GetDataResponse{Data: []byte("first")})
	returns("more requests buffered", func() { o.endHold(true) })

	// A reply far larger than the socket buffers, nobody reading yet.
	big := bytes.Repeat([]byte{'x'}, 4<<20)
	o.hold()
	o.reply(2, 1, jute.OK, &jute.GetDataResponse{Data: big})
	o.reply(3, 1, jute.OK, &jute.GetDataResponse{Data: []byte("after")})
	returns("a reply the socket cannot take at once", func() { o.endHold(false) })
	if !o.isWriting() {
		t.Fatal("nobody is writing the rest of the large reply")
	}

	_ = client.SetReadDeadline(time.Now().Add(20 * time.Second))
	var got []byte
	buf := make([]byte, 256<<10)
	for !bytes.Contains(got[max(len(got)-200, 0):], []byte("after")) {
		n, err := client.Read(buf)
		if err != nil {
			t.Fatalf("after %d bytes: %v", len(got), err)
		}
		got = append(got, buf[:n]...)
	}
	first, after := bytes.Index(got, []byte("first")), bytes.LastIndex(got, []byte("after"))
	if first < 0 || after < first+len(big) {
		t.Fatalf("replies out of order or missing: %d bytes, first at %d, after at %d", len(got), first, after)
	}
}
