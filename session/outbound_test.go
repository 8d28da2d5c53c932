package session

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// startWriter makes o write to server until the test ends; the channel
// returned is closed once the connection is finished (the writer closed
// it).
func startWriter(t *testing.T, o *outbound, server net.Conn, timeout time.Duration) <-chan struct{} {
	done := make(chan struct{})
	exited := make(chan struct{})
	o.start(server, done, timeout)
	go func() {
		defer close(exited)
		for {
			o.mu.Lock()
			finished := o.finished
			o.mu.Unlock()
			if finished {
				return
			}
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() {
		o.kill()
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
	o := newOutbound(nil)
	startWriter(t, o, server, 30*time.Second)

	waitWritten := func() {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			o.mu.Lock()
			idle := len(o.w.Buf) == 0 && !o.writing && o.inflight == 0
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

	// A large reply, then a small one: once the small one is written, the
	// buffer kept for reuse must be small again.
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
		o := newOutbound(nil)
		return o, client, startWriter(t, o, server, timeout)
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
