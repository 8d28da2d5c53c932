package bench

import (
	"context"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// FuzzServerReplies feeds arbitrary bytes to a session as the server's side
// of the stream: the client must never panic, must fail or answer every
// pending request, and must stop cleanly.
func FuzzServerReplies(f *testing.F) {
	frame := func(parts ...func(w *jute.Writer)) []byte {
		var w jute.Writer
		at := jute.BeginFrame(&w)
		for _, p := range parts {
			p(&w)
		}
		jute.EndFrame(&w, at)
		return w.Buf
	}
	hdr := func(xid int32, err jute.ErrCode) func(w *jute.Writer) {
		return func(w *jute.Writer) { (&jute.ReplyHeader{Xid: xid, Zxid: 5, Err: err}).Encode(w) }
	}
	f.Add(frame(hdr(1, 0), func(w *jute.Writer) { w.Buffer([]byte("v")); (&jute.Stat{}).Encode(w) }))
	f.Add(append(frame(hdr(-2, 0)), frame(hdr(1, -101))...))
	f.Add(frame(hdr(-1, 0), func(w *jute.Writer) { (&jute.WatcherEvent{Type: 3, State: 3, Path: "/a"}).Encode(w) }))
	f.Add(frame(hdr(2, 0)))
	f.Add([]byte{0, 0, 0, 3, 1, 2, 3})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, stream []byte) {
		client, server := net.Pipe()
		defer server.Close()
		go func() { _, _ = io.Copy(io.Discard, server) }()
		c := start(client, &jute.ConnectResponse{TimeOut: 30000, SessionID: 1},
			dialOptions{inflight: 4, events: fanoutWatcher{w: &fanoutWorkload{}, seen: new(atomic.Int64)}})
		col := &collector{}
		sent := 0
		for i := range int64(3) {
			if c.GetData("/a", true, classGet, col, i) == nil {
				sent++
			}
		}
		_ = server.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = server.Write(stream)
		server.Close()
		select {
		case <-c.done:
		case <-time.After(5 * time.Second):
			t.Fatal("session did not stop after the server closed")
		}
		col.mu.Lock()
		defer col.mu.Unlock()
		if len(col.got) != sent {
			t.Fatalf("%d of %d requests resolved", len(col.got), sent)
		}
		if err := c.Barrier(context.Background()); err == nil {
			t.Fatal("barrier succeeded on a dead session")
		}
	})
}
