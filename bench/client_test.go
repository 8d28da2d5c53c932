package bench

import (
	"bufio"
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// fakeServer accepts one connection on 127.0.0.1, answers the handshake and
// then hands each decoded request header to serve, which writes replies with
// the given reply function.
type fakeServer struct {
	ln   net.Listener
	done chan struct{}
}

// fakeConn is the server side of one fake session.
type fakeConn struct {
	nc net.Conn
	w  jute.Writer
}

// reply writes a reply header (and optional body) immediately.
func (f *fakeConn) reply(xid int32, err jute.ErrCode, body func(w *jute.Writer)) {
	f.w.Reset()
	at := jute.BeginFrame(&f.w)
	(&jute.ReplyHeader{Xid: xid, Zxid: 1, Err: err}).Encode(&f.w)
	if body != nil {
		body(&f.w)
	}
	jute.EndFrame(&f.w, at)
	_, _ = f.nc.Write(f.w.Buf)
}

// raw writes a frame with the given payload.
func (f *fakeConn) raw(payload []byte) {
	f.w.Reset()
	at := jute.BeginFrame(&f.w)
	f.w.Raw(payload)
	jute.EndFrame(&f.w, at)
	_, _ = f.nc.Write(f.w.Buf)
}

func startFake(t testing.TB, serve func(f *fakeConn, hdrs <-chan jute.RequestHeader)) *fakeServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeServer{ln: ln, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		br := bufio.NewReader(nc)
		frame, err := jute.ReadFrame(br, nil, 1<<20)
		if err != nil {
			return
		}
		var req jute.ConnectRequest
		if req.Decode(jute.NewReader(frame)) != nil {
			return
		}
		f := &fakeConn{nc: nc}
		resp := jute.ConnectResponse{TimeOut: req.TimeOut, SessionID: 42, Passwd: make([]byte, 16), HasReadOnly: true}
		at := jute.BeginFrame(&f.w)
		resp.Encode(&f.w)
		jute.EndFrame(&f.w, at)
		if _, err := nc.Write(f.w.Buf); err != nil {
			return
		}
		hdrs := make(chan jute.RequestHeader, 1024)
		go func() {
			defer close(hdrs)
			var buf []byte
			for {
				frame, err := jute.ReadFrame(br, buf, 1<<20)
				if err != nil {
					return
				}
				var h jute.RequestHeader
				if h.Decode(jute.NewReader(frame)) != nil {
					return
				}
				hdrs <- h
			}
		}()
		serve(f, hdrs)
	}()
	t.Cleanup(func() { ln.Close(); <-s.done })
	return s
}

func dialFake(t testing.TB, s *fakeServer, inflight int, rec *recorder, ev eventHandler) *conn {
	t.Helper()
	c, err := dial(context.Background(), dialOptions{
		addr: s.ln.Addr().String(), timeout: 10 * time.Second, dialWait: 2 * time.Second,
		inflight: inflight, rec: rec, events: ev,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Abort)
	return c
}

// collector records which requests were answered with what.
type collector struct {
	mu  sync.Mutex
	got []int64
	err []jute.ErrCode
}

func (c *collector) handleReply(p *pendingOp, err jute.ErrCode, _ []byte) {
	c.mu.Lock()
	c.got = append(c.got, p.arg)
	c.err = append(c.err, err)
	c.mu.Unlock()
}

func TestRepliesMatchedInOrder(t *testing.T) {
	s := startFake(t, func(f *fakeConn, hdrs <-chan jute.RequestHeader) {
		n := 0
		for h := range hdrs {
			n++
			if n%3 == 0 { // interleave pings and notifications: never matched
				f.reply(jute.XidPing, jute.OK, nil)
				f.reply(jute.XidNotification, jute.OK, func(w *jute.Writer) {
					(&jute.WatcherEvent{Type: jute.EventNodeDataChanged, State: 3, Path: "/x"}).Encode(w)
				})
			}
			code := jute.OK
			if h.Xid%5 == 0 {
				code = jute.ErrNoNode
			}
			f.reply(h.Xid, code, nil)
		}
	})
	rec := newRecorder(newWindow())
	rec.win.start.Store(0)
	c := dialFake(t, s, 4, rec, nil)
	col := &collector{}
	for i := range int64(100) {
		if err := c.GetData("/k", false, classGet, col, i); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Barrier(context.Background()); err != nil {
		t.Fatal(err)
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	if len(col.got) != 100 {
		t.Fatalf("%d replies, want 100", len(col.got))
	}
	for i, a := range col.got {
		if a != int64(i) {
			t.Fatalf("reply %d delivered to request %d", i, a)
		}
		want := jute.OK
		if (i+1)%5 == 0 { // xids start at 1
			want = jute.ErrNoNode
		}
		if col.err[i] != want {
			t.Fatalf("request %d: code %v, want %v", i, col.err[i], want)
		}
	}
	if ok, bad := rec.ops[classGet].Load(), rec.nerr.Load(); ok != 80 || bad != 20 {
		t.Fatalf("recorded %d ok, %d errors; want 80, 20", ok, bad)
	}
}

// protocolCase is a misbehaving server and what the client must report.
func TestProtocolViolations(t *testing.T) {
	cases := map[string]func(f *fakeConn, hdrs <-chan jute.RequestHeader){
		"out of order": func(f *fakeConn, hdrs <-chan jute.RequestHeader) {
			a, b := <-hdrs, <-hdrs
			f.reply(b.Xid, jute.OK, nil)
			f.reply(a.Xid, jute.OK, nil)
			time.Sleep(100 * time.Millisecond)
		},
		"unsolicited": func(f *fakeConn, hdrs <-chan jute.RequestHeader) {
			f.reply(77, jute.OK, nil)
			time.Sleep(100 * time.Millisecond)
		},
		"short header": func(f *fakeConn, hdrs <-chan jute.RequestHeader) {
			<-hdrs
			f.raw([]byte{0, 0, 0, 1, 0})
			time.Sleep(100 * time.Millisecond)
		},
		"bad event": func(f *fakeConn, hdrs <-chan jute.RequestHeader) {
			f.reply(jute.XidNotification, jute.OK, func(w *jute.Writer) { w.Int(3); w.Int(3); w.Int(1 << 30) })
			time.Sleep(100 * time.Millisecond)
		},
		"huge frame": func(f *fakeConn, hdrs <-chan jute.RequestHeader) {
			_, _ = f.nc.Write([]byte{0x7f, 0xff, 0xff, 0xff})
			time.Sleep(100 * time.Millisecond)
		},
	}
	for name, serve := range cases {
		t.Run(name, func(t *testing.T) {
			s := startFake(t, serve)
			c := dialFake(t, s, 8, nil, fanoutWatcher{w: &fanoutWorkload{}, seen: new(atomic.Int64)})
			col := &collector{}
			rejected := 0
			for i := range int64(2) {
				if c.GetData("/a", false, classGet, col, i) != nil {
					rejected++
				}
			}
			select {
			case <-c.done:
			case <-time.After(5 * time.Second):
				t.Fatal("connection survived a protocol violation")
			}
			if err := c.Err(); !errors.Is(err, ErrProtocol) && !errors.Is(err, jute.ErrFrameTooLarge) {
				t.Fatalf("Err() = %v, want a protocol violation", err)
			}
			col.mu.Lock()
			defer col.mu.Unlock()
			if len(col.got)+rejected != 2 {
				t.Fatalf("%d requests resolved and %d rejected, want 2 in all", len(col.got), rejected)
			}
			for _, code := range col.err {
				if code != jute.ErrConnectionLoss && code != jute.OK {
					t.Fatalf("pending request failed with %v", code)
				}
			}
			if err := c.GetData("/c", false, classGet, nil, 0); !errors.Is(err, ErrClosed) {
				t.Fatalf("request on dead connection: %v, want ErrClosed", err)
			}
		})
	}
}

func TestInflightBound(t *testing.T) {
	release := make(chan struct{})
	s := startFake(t, func(f *fakeConn, hdrs <-chan jute.RequestHeader) {
		// Hold the first three requests until released, then answer
		// everything at once (holding later ones in threes too made the
		// barrier wait forever whenever the last GetData reached the
		// server before it).
		var held []jute.RequestHeader
		released := false
		for h := range hdrs {
			if released {
				f.reply(h.Xid, jute.OK, nil)
				continue
			}
			held = append(held, h)
			if len(held) == 3 {
				<-release
				for _, h := range held {
					f.reply(h.Xid, jute.OK, nil)
				}
				held, released = nil, true
			}
		}
	})
	c := dialFake(t, s, 3, nil, nil)
	sent := make(chan int, 10)
	go func() {
		for i := range 6 {
			if c.GetData("/k", false, classGet, nil, 0) != nil {
				return
			}
			sent <- i
		}
	}()
	time.Sleep(200 * time.Millisecond)
	if n := len(sent); n != 3 {
		t.Fatalf("%d requests issued with depth 3 and no replies", n)
	}
	close(release)
	if err := c.Barrier(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestCloseSession(t *testing.T) {
	s := startFake(t, func(f *fakeConn, hdrs <-chan jute.RequestHeader) {
		for h := range hdrs {
			f.reply(h.Xid, jute.OK, nil)
			if h.Type == jute.OpCloseSession {
				return
			}
		}
	})
	c := dialFake(t, s, 2, nil, nil)
	if err := c.Close(2*time.Second, classClose); err != nil {
		t.Fatal(err)
	}
	if err := c.Err(); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

// BenchmarkClientPipelined measures the client's CPU cost per request
// against a fake server that answers every request at once.
func BenchmarkClientPipelined(b *testing.B) {
	s := startFake(b, func(f *fakeConn, hdrs <-chan jute.RequestHeader) {
		bw := bufio.NewWriterSize(f.nc, 64<<10)
		var w jute.Writer
		for h := range hdrs {
			w.Reset()
			at := jute.BeginFrame(&w)
			(&jute.ReplyHeader{Xid: h.Xid, Zxid: 1}).Encode(&w)
			(&jute.GetDataResponse{Data: make([]byte, 0)}).Encode(&w)
			jute.EndFrame(&w, at)
			_, _ = bw.Write(w.Buf)
			if len(hdrs) == 0 {
				_ = bw.Flush()
			}
		}
	})
	rec := newRecorder(newWindow())
	rec.win.start.Store(0)
	c := dialFake(b, s, 64, rec, nil)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := c.GetData("/zkraft-bench/keys/k0000001", false, classGet, nil, 0); err != nil {
			b.Fatal(err)
		}
	}
	if err := c.Barrier(context.Background()); err != nil {
		b.Fatal(err)
	}
}

func dialFakeTimeout(t testing.TB, s *fakeServer, timeout time.Duration) *conn {
	t.Helper()
	c, err := dial(context.Background(), dialOptions{
		addr: s.ln.Addr().String(), timeout: timeout, dialWait: 2 * time.Second, inflight: 4,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Abort)
	return c
}

func TestSilentServerIsConnectionLoss(t *testing.T) {
	s := startFake(t, func(f *fakeConn, hdrs <-chan jute.RequestHeader) {
		for range hdrs { // never answers, not even pings
		}
	})
	c := dialFakeTimeout(t, s, 1500*time.Millisecond)
	col := &collector{}
	if err := c.GetData("/k", false, classGet, col, 7); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
		t.Fatal("silent server not detected")
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	if len(col.err) != 1 || col.err[0] != jute.ErrConnectionLoss {
		t.Fatalf("pending request resolved with %v, want connection loss", col.err)
	}
}

func TestPingsKeepIdleSessionAlive(t *testing.T) {
	var mu sync.Mutex
	pings := 0
	s := startFake(t, func(f *fakeConn, hdrs <-chan jute.RequestHeader) {
		for h := range hdrs {
			if h.Xid == jute.XidPing && h.Type == jute.OpPing {
				mu.Lock()
				pings++
				mu.Unlock()
			}
			f.reply(h.Xid, jute.OK, nil)
		}
	})
	c := dialFakeTimeout(t, s, 1500*time.Millisecond)
	time.Sleep(2500 * time.Millisecond)
	if err := c.Err(); err != nil {
		t.Fatalf("idle session died: %v", err)
	}
	if err := c.Barrier(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if pings < 2 {
		t.Fatalf("%d pings in 2.5s with a 1.5s session timeout", pings)
	}
}
