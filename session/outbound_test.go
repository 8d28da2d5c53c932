package session

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// TestOutboundDropsLargeBuffers checks that a connection does not keep the
// buffer of one large reply for its lifetime: with thousands of clients
// that each once read a 1 MB znode, that would be gigabytes.
func TestOutboundDropsLargeBuffers(t *testing.T) {
	server, client := net.Pipe()
	defer client.Close()
	go func() { _, _ = io.Copy(io.Discard, client) }()
	o := newOutbound()
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		o.writeLoop(server, done)
		close(exited)
	}()
	defer func() {
		close(done)
		<-exited
	}()

	waitWritten := func() {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			o.mu.Lock()
			idle := len(o.w.Buf) == 0 && o.spare != nil
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
