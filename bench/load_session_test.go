package bench

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// connectServer accepts connections on 127.0.0.1 and hands each, with
// its decoded ConnectRequest, to handle on a goroutine of its own.
func connectServer(t *testing.T, handle func(nc net.Conn, br *bufio.Reader, req jute.ConnectRequest)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
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
				handle(nc, br, req)
			}()
		}
	}()
	return ln.Addr().String()
}

// writeFrame writes recs as one frame.
func writeFrame(nc net.Conn, recs ...jute.Record) {
	var w jute.Writer
	at := jute.BeginFrame(&w)
	for _, r := range recs {
		r.Encode(&w)
	}
	jute.EndFrame(&w, at)
	_, _ = nc.Write(w.Buf)
}

var testPasswd = []byte("0123456789abcdef")

// firstServer creates session 7 and answers its first request with zxid
// 99, then drops the connection.
func firstServer(t *testing.T) string {
	return connectServer(t, func(nc net.Conn, br *bufio.Reader, req jute.ConnectRequest) {
		writeFrame(nc, &jute.ConnectResponse{TimeOut: req.TimeOut, SessionID: 7, Passwd: testPasswd})
		for {
			frame, err := jute.ReadFrame(br, nil, 1<<20)
			if err != nil {
				return
			}
			var h jute.RequestHeader
			if h.Decode(jute.NewReader(frame)) != nil || h.Xid == jute.XidPing {
				continue
			}
			writeFrame(nc, &jute.ReplyHeader{Xid: h.Xid, Zxid: 99}, &jute.Stat{})
			return // drops the connection
		}
	})
}

// openAndBreak opens a session on first, then breaks it with a request;
// it resumes on second.
func openAndBreak(t *testing.T, first, second string) *loadSession {
	t.Helper()
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	s := newLoadSession(0, []string{first, second}, dialOptions{timeout: 10 * time.Second, dialWait: 2 * time.Second, inflight: 4}, true, done, nil)
	if err := s.open(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.close(time.Second) })
	if err := s.conn().Exists("/", false, classNone, nil, 0); err != nil {
		t.Fatal(err)
	}
	return s
}

// waitState waits until s is in state want.
func waitState(t *testing.T, s *loadSession, want sessionState) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		s.mu.Lock()
		got := s.state
		s.mu.Unlock()
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("session state %d, want %d", got, want)
		}
	}
}

// TestSessionResumesWithItsIDPasswordAndZxid: a session whose connection
// breaks presents its id, password and the last zxid it saw to the next
// server, and counts the break and the resumption.
func TestSessionResumesWithItsIDPasswordAndZxid(t *testing.T) {
	got := make(chan jute.ConnectRequest, 1)
	second := connectServer(t, func(nc net.Conn, br *bufio.Reader, req jute.ConnectRequest) {
		got <- req
		writeFrame(nc, &jute.ConnectResponse{TimeOut: req.TimeOut, SessionID: req.SessionID, Passwd: req.Passwd})
		_, _ = br.WriteTo(bytes.NewBuffer(nil)) // hold the connection
	})
	s := openAndBreak(t, firstServer(t), second)
	select {
	case req := <-got:
		if req.SessionID != 7 || !bytes.Equal(req.Passwd, testPasswd) || req.LastZxidSeen != 99 {
			t.Fatalf("resumed with id %d, password %q, last zxid %d; want 7, %q, 99", req.SessionID, req.Passwd, req.LastZxidSeen, testPasswd)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the session did not try to resume")
	}
	waitState(t, s, stateLive)
	var n sessionCounts
	n.add(s)
	if n.Live != 1 || n.Disconnects != 1 || n.Resumed != 1 || n.LastResume == 0 {
		t.Fatalf("counts %+v", n)
	}
}

// TestSessionExpiredOnResumption: a server that answers the resumption
// with no timeout has expired the session; it is not tried again.
func TestSessionExpiredOnResumption(t *testing.T) {
	second := connectServer(t, func(nc net.Conn, _ *bufio.Reader, _ jute.ConnectRequest) {
		writeFrame(nc, &jute.ConnectResponse{Passwd: make([]byte, 16)})
	})
	s := openAndBreak(t, firstServer(t), second)
	waitState(t, s, stateExpired)
	var n sessionCounts
	n.add(s)
	if n.Expired != 1 || n.Resumed != 0 || n.FirstError == "" {
		t.Fatalf("counts %+v", n)
	}
}
