package session

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// startWriter runs o's writer goroutine on server until the test ends; the
// channel returned is closed when the writer returns.
func startWriter(t *testing.T, o *outbound, server net.Conn) <-chan struct{} {
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		o.writeLoop(server, done)
		close(exited)
	}()
	t.Cleanup(func() {
		close(done)
		<-exited
	})
	return exited
}

// TestOutboundDropsLargeBuffers checks that a connection does not keep the
// buffer of one large reply for its lifetime: with thousands of clients
// that each once read a 1 MB znode, that would be gigabytes.
func TestOutboundDropsLargeBuffers(t *testing.T) {
	server, client := net.Pipe()
	defer client.Close()
	go func() { _, _ = io.Copy(io.Discard, client) }()
	o := newOutbound(30 * time.Second)
	startWriter(t, o, server)

	waitWritten := func() {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			o.mu.Lock()
			idle := len(o.w.Buf) == 0 && !o.writing
			o.mu.Unlock()
			if idle {
				return
			}
			if time.Now().After(deadline) {
				t.Fatal("the writer did not write the queued reply")
			}
			time.Sleep(time.Millisecond)
		}
	}

	o.reply(1, 1, jute.OK, &jute.GetDataResponse{Data: make([]byte, 100)})
	waitWritten()
	o.mu.Lock()
	small := cap(o.spare)
	o.mu.Unlock()
	if small == 0 || small > retainBufferSize {
		t.Fatalf("a small reply's buffer (cap %d) should be kept for reuse", small)
	}

	// A large reply, then a small one (written together or one after the
	// other): once the small one is written, the buffer kept for reuse must
	// be small again, or none.
	o.reply(2, 2, jute.OK, &jute.GetDataResponse{Data: make([]byte, 512<<10)})
	o.reply(3, 3, jute.OK, &jute.GetDataResponse{Data: make([]byte, 100)})
	waitWritten()
	o.reply(4, 4, jute.OK, &jute.GetDataResponse{Data: make([]byte, 100)})
	waitWritten()
	o.mu.Lock()
	kept := max(cap(o.spare), cap(o.w.Buf))
	o.mu.Unlock()
	if kept > retainBufferSize {
		t.Fatalf("the large reply's buffer was kept (cap %d)", kept)
	}
}

// TestOutboundWriteTimeout: a client that stops reading is cut off once a
// write has blocked for the write timeout, and a connection that was idle
// for longer than the timeout still writes (its deadline is moved on).
func TestOutboundWriteTimeout(t *testing.T) {
	const timeout = 100 * time.Millisecond
	start := func(t *testing.T) (*outbound, net.Conn, <-chan struct{}) {
		server, client := net.Pipe()
		t.Cleanup(func() { client.Close() })
		o := newOutbound(timeout)
		return o, client, startWriter(t, o, server)
	}

	t.Run("idle", func(t *testing.T) {
		o, client, exited := start(t)
		frames := make(chan []byte, 4)
		go func() {
			for {
				f, err := jute.ReadFrame(client, nil, 1<<20)
				if err != nil {
					close(frames)
					return
				}
				frames <- f
			}
		}()
		for i := int32(1); i <= 3; i++ {
			o.reply(i, 1, jute.OK, nil)
			select {
			case f, ok := <-frames:
				if !ok {
					t.Fatalf("reply %d: the connection was closed", i)
				}
				var h jute.ReplyHeader
				if err := h.Decode(jute.NewReader(f)); err != nil || h.Xid != i {
					t.Fatalf("reply %d: got %+v (%v)", i, h, err)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("reply %d was not written", i)
			}
			time.Sleep(3 * timeout) // idle past the deadline set for the last write
		}
		select {
		case <-exited:
			t.Fatal("the writer stopped")
		default:
		}
	})

	t.Run("stalled", func(t *testing.T) {
		o, _, exited := start(t) // nobody reads the client side
		began := time.Now()
		o.reply(1, 1, jute.OK, &jute.GetDataResponse{Data: make([]byte, 100)})
		select {
		case <-exited:
			if d := time.Since(began); d < timeout/2 {
				t.Fatalf("cut off after %v, before the timeout", d)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a client that does not read was not cut off")
		}
		if !o.isDead() {
			t.Fatal("the connection is not marked dead")
		}
	})
}

// TestOutboundReaderWritesHeldReplies: a reply queued under hold is not the
// writer's: the reader writes it (flushDeferred) when nothing more is
// buffered, or hands it to the writer when more requests are. A frame
// queued by another producer while the reader writes goes out after it,
// written by the writer, and a close asked for meanwhile is carried out.
func TestOutboundReaderWritesHeldReplies(t *testing.T) {
	readXid := func(t *testing.T, c net.Conn) int32 {
		t.Helper()
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		f, err := jute.ReadFrame(c, nil, 1<<20)
		if err != nil {
			t.Fatalf("read a frame: %v", err)
		}
		var h jute.ReplyHeader
		if err := h.Decode(jute.NewReader(f)); err != nil {
			t.Fatal(err)
		}
		return h.Xid
	}

	t.Run("inline", func(t *testing.T) {
		server, client := net.Pipe()
		defer client.Close()
		defer server.Close()
		o := newOutbound(time.Minute) // no writer goroutine: only the reader can write
		o.hold()
		o.reply(1, 1, jute.OK, nil)
		o.release()
		if len(o.wake) != 0 {
			t.Fatal("a held reply woke the writer")
		}
		written := make(chan struct{})
		go func() { o.flushDeferred(server, false); close(written) }()
		if x := readXid(t, client); x != 1 {
			t.Fatalf("got xid %d, want 1", x)
		}
		<-written
		if o.deferred.Load() || len(o.w.Buf) != 0 {
			t.Fatal("the held reply is still queued")
		}
	})

	t.Run("more buffered", func(t *testing.T) {
		o := newOutbound(time.Minute)
		o.hold()
		o.reply(1, 1, jute.OK, nil)
		o.release()
		o.flushDeferred(nil, true) // must not write: nc is nil
		if len(o.wake) != 1 {
			t.Fatal("the writer was not woken for a held reply left to it")
		}
		if len(o.w.Buf) == 0 {
			t.Fatal("the held reply was dropped")
		}
	})

	t.Run("queued during the reader's write", func(t *testing.T) {
		server, client := net.Pipe()
		defer client.Close()
		o := newOutbound(time.Minute)
		exited := startWriter(t, o, server)
		o.hold()
		o.reply(1, 1, jute.OK, nil)
		o.release()
		go o.flushDeferred(server, false) // blocks in the pipe until the client reads
		deadline := time.Now().Add(5 * time.Second)
		for {
			o.mu.Lock()
			writing := o.writing
			o.mu.Unlock()
			if writing {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the reader did not start writing")
			}
			time.Sleep(time.Millisecond)
		}
		o.reply(2, 2, jute.OK, nil) // another producer: wakes the writer, which must wait
		o.closeAfterFlush()
		if x := readXid(t, client); x != 1 {
			t.Fatalf("first frame: xid %d, want 1", x)
		}
		if x := readXid(t, client); x != 2 {
			t.Fatalf("second frame: xid %d, want 2", x)
		}
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			t.Fatal("the close asked for during the reader's write was not carried out")
		}
	})
}

// TestOutboundLargeHeldReplyGoesToWriter: a held backlog over
// inlineWriteMax is the writer's, not the reader's.
func TestOutboundLargeHeldReplyGoesToWriter(t *testing.T) {
	o := newOutbound(time.Minute)
	o.hold()
	o.reply(1, 1, jute.OK, &jute.GetDataResponse{Data: make([]byte, inlineWriteMax)})
	o.release()
	o.flushDeferred(nil, false) // must not write: nc is nil
	if len(o.wake) != 1 || len(o.w.Buf) == 0 {
		t.Fatal("a large held reply was not left to the writer")
	}
}
