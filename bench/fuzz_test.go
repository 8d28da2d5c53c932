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

// testFrame encodes parts as one length-prefixed frame.
func testFrame(parts ...func(w *jute.Writer)) []byte {
	var w jute.Writer
	at := jute.BeginFrame(&w)
	for _, p := range parts {
		p(&w)
	}
	jute.EndFrame(&w, at)
	return w.Buf
}

// FuzzServerReplies feeds arbitrary bytes to a session as the server's side
// of the stream: the client must never panic, must fail or answer every
// pending request, and must stop cleanly.
func FuzzServerReplies(f *testing.F) {
	hdr := func(xid int32, err jute.ErrCode) func(w *jute.Writer) {
		return func(w *jute.Writer) { (&jute.ReplyHeader{Xid: xid, Zxid: 5, Err: err}).Encode(w) }
	}
	f.Add(testFrame(hdr(1, 0), func(w *jute.Writer) { w.Buffer([]byte("v")); (&jute.Stat{}).Encode(w) }))
	f.Add(append(testFrame(hdr(-2, 0)), testFrame(hdr(1, -101))...))
	f.Add(testFrame(hdr(-1, 0), func(w *jute.Writer) { (&jute.WatcherEvent{Type: 3, State: 3, Path: "/a"}).Encode(w) }))
	f.Add(testFrame(hdr(2, 0)))
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

// FuzzChurnReplies feeds arbitrary bytes to an ephemeral-churn cycle as the
// server's side of its connection: the cycle must never panic, must end
// once the server closes, and may count a whole cycle only if every request
// was answered.
func FuzzChurnReplies(f *testing.F) {
	connected := testFrame(func(w *jute.Writer) {
		(&jute.ConnectResponse{TimeOut: 30000, SessionID: 9, Passwd: make([]byte, 16)}).Encode(w)
	})
	reply := func(xid int32, err jute.ErrCode) []byte {
		return testFrame(func(w *jute.Writer) { (&jute.ReplyHeader{Xid: xid, Zxid: 5, Err: err}).Encode(w) })
	}
	whole := append([]byte(nil), connected...)
	for xid := int32(1); xid <= 3; xid++ {
		whole = append(whole, reply(xid, 0)...)
	}
	f.Add(whole)
	f.Add(append(append(append([]byte(nil), connected...), reply(-2, 0)...), reply(1, -110)...))
	f.Add(append(append([]byte(nil), connected...), reply(7, 0)...))
	f.Add(connected[:9])
	f.Add([]byte{0x7f, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, stream []byte) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			defer nc.Close()
			go func() { _, _ = io.Copy(io.Discard, nc) }()
			_ = nc.SetWriteDeadline(time.Now().Add(time.Second))
			_, _ = nc.Write(stream)
		}()
		cc := newChurnClient(ln.Addr().String(), 2*time.Second, time.Second)
		rec := churnRecorder()
		done := make(chan error, 1)
		go func() {
			_, err := cc.cycle(rec, "/f-", 2, nil)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil && rec.ops[classCycle].Load() != 1 {
				t.Fatal("a cycle without error was not counted")
			}
			if err != nil && rec.ops[classCycle].Load() != 0 {
				t.Fatalf("a failed cycle (%v) was counted", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the cycle did not end after the server closed")
		}
	})
}
