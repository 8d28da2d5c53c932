package bench

import (
	"errors"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// churnFake serves churn cycles on 127.0.0.1: it answers the handshake,
// checks each request, and writes each reply through write (which may split
// it), until the closeSession; answer may change a reply's error or xid, or
// return false to drop the connection instead of answering.
type churnFake struct {
	t      *testing.T
	ln     net.Listener
	paths  chan string
	answer func(i int, hdr *jute.ReplyHeader) bool
	split  bool // write replies a byte at a time
}

func startChurnFake(t *testing.T, f *churnFake) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.t, f.ln = t, ln
	f.paths = make(chan string, 64)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go f.serve(nc)
		}
	}()
	return ln.Addr().String()
}

func (f *churnFake) serve(nc net.Conn) {
	defer nc.Close()
	var w jute.Writer
	send := func() {
		if !f.split {
			_, _ = nc.Write(w.Buf)
			return
		}
		for i := range w.Buf {
			if _, err := nc.Write(w.Buf[i : i+1]); err != nil {
				return
			}
		}
	}
	frame, err := jute.ReadFrame(nc, nil, 1<<20)
	if err != nil {
		return
	}
	var creq jute.ConnectRequest
	if err := creq.Decode(jute.NewReader(frame)); err != nil {
		f.t.Errorf("ConnectRequest: %v", err)
		return
	}
	at := jute.BeginFrame(&w)
	(&jute.ConnectResponse{TimeOut: creq.TimeOut, SessionID: 77, Passwd: make([]byte, 16)}).Encode(&w)
	jute.EndFrame(&w, at)
	send()
	for i := 0; ; i++ {
		frame, err := jute.ReadFrame(nc, nil, 1<<20)
		if err != nil {
			return
		}
		r := jute.NewReader(frame)
		var hdr jute.RequestHeader
		if err := hdr.Decode(r); err != nil {
			f.t.Errorf("request header: %v", err)
			return
		}
		if hdr.Type == jute.OpCreate {
			var req jute.CreateRequest
			if err := req.Decode(r); err != nil || req.Flags != jute.FlagEphemeral {
				f.t.Errorf("create: %+v %v", req, err)
				return
			}
			f.paths <- req.Path
		}
		reply := jute.ReplyHeader{Xid: hdr.Xid, Zxid: int64(i + 1)}
		if f.answer != nil && !f.answer(i, &reply) {
			return
		}
		w.Reset()
		at := jute.BeginFrame(&w)
		reply.Encode(&w)
		jute.EndFrame(&w, at)
		send()
		if hdr.Type == jute.OpCloseSession {
			return
		}
	}
}

func churnRecorder() *recorder {
	win := newWindow()
	win.start.Store(0)
	return newRecorder(win)
}

// TestChurnCycle: a cycle sends the handshake, n ephemeral creates named
// prefix+i and a closeSession, and records each, even when the replies
// arrive a byte at a time; the client's buffers are reused for the next
// cycle.
func TestChurnCycle(t *testing.T) {
	for _, split := range []bool{false, true} {
		f := &churnFake{split: split}
		addr := startChurnFake(t, f)
		cc := newChurnClient(addr, 10*time.Second, time.Second)
		rec := churnRecorder()
		for cycle := 0; cycle < 3; cycle++ {
			prefix := "/eph/w0-" + strconv.Itoa(cycle) + "-"
			connected, err := cc.cycle(rec, prefix, 4, []byte("value"))
			if !connected || err != nil {
				t.Fatalf("split=%v cycle %d: connected %v, %v", split, cycle, connected, err)
			}
			for i := 0; i < 4; i++ {
				if p := <-f.paths; p != prefix+strconv.Itoa(i) {
					t.Fatalf("create %d: path %q", i, p)
				}
			}
		}
		for class, want := range map[opClass]int64{classConnect: 3, classCreate: 12, classClose: 3, classCycle: 3} {
			if got := rec.ops[class].Load(); got != want {
				t.Errorf("split=%v: %v counted %d, want %d", split, class, got, want)
			}
		}
		if n := rec.nerr.Load(); n != 0 {
			t.Errorf("split=%v: %d errors", split, n)
		}
	}
}

// TestChurnCycleServerErrors: a create the server refuses is counted as
// that error; a connection lost mid-cycle counts the unanswered requests as
// lost; a reply out of order is a protocol error.
func TestChurnCycleServerErrors(t *testing.T) {
	f := &churnFake{answer: func(i int, hdr *jute.ReplyHeader) bool {
		if i == 1 {
			hdr.Err = jute.ErrNodeExists
		}
		return true
	}}
	cc := newChurnClient(startChurnFake(t, f), 10*time.Second, time.Second)
	rec := churnRecorder()
	if _, err := cc.cycle(rec, "/p-", 3, nil); err != nil {
		t.Fatal(err)
	}
	if rec.ops[classCreate].Load() != 2 || rec.errs[errKey{classCreate, jute.ErrNodeExists, ""}] != 1 {
		t.Fatalf("creates %d, errors %v", rec.ops[classCreate].Load(), rec.errs)
	}

	f = &churnFake{answer: func(i int, _ *jute.ReplyHeader) bool { return i < 2 }}
	cc = newChurnClient(startChurnFake(t, f), 10*time.Second, time.Second)
	rec = churnRecorder()
	connected, err := cc.cycle(rec, "/p-", 4, nil)
	if !connected || err == nil {
		t.Fatalf("connection dropped after two replies: connected %v, err %v", connected, err)
	}
	if rec.ops[classCreate].Load() != 2 || rec.errs[errKey{classCreate, jute.ErrConnectionLoss, ""}] != 2 ||
		rec.errs[errKey{classClose, jute.ErrConnectionLoss, ""}] != 1 || rec.ops[classCycle].Load() != 0 {
		t.Fatalf("creates %d, errors %v", rec.ops[classCreate].Load(), rec.errs)
	}

	f = &churnFake{answer: func(i int, hdr *jute.ReplyHeader) bool { hdr.Xid += 5; return true }}
	cc = newChurnClient(startChurnFake(t, f), 10*time.Second, time.Second)
	if _, err := cc.cycle(churnRecorder(), "/p-", 2, nil); !errors.Is(err, ErrProtocol) {
		t.Fatalf("reply out of order: %v", err)
	}

	cc = newChurnClient(f.ln.Addr().String(), 10*time.Second, time.Second)
	f.ln.Close()
	if connected, err := cc.cycle(churnRecorder(), "/p-", 2, nil); connected || err == nil {
		t.Fatalf("no server: connected %v, err %v", connected, err)
	}
}
