package watchconn

import (
	"bufio"
	"net"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// TestSessionEndsWhenMemberFallsSilent: a member that stops
// answering without closing the connection (a dead host, a partition)
// ends the session within the session's read timeout instead of
// leaving it open and silent for ever.
func TestSessionEndsWhenMemberFallsSilent(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		br := bufio.NewReader(c)
		if _, err := jute.ReadFrame(br, nil, MaxFrame); err != nil {
			return
		}
		var w jute.Writer
		at := jute.BeginFrame(&w)
		(&jute.ConnectResponse{TimeOut: 600, SessionID: 0x42, Passwd: make([]byte, 16)}).Encode(&w)
		jute.EndFrame(&w, at)
		if _, err := c.Write(w.Buf); err != nil {
			return
		}
		w = jute.Writer{}
		// Answer the addWatch, then answer nothing more (pings included).
		frame, err := jute.ReadFrame(br, nil, MaxFrame)
		if err != nil {
			return
		}
		var req jute.RequestHeader
		if req.Decode(jute.NewReader(frame)) != nil {
			return
		}
		at2 := jute.BeginFrame(&w)
		(&jute.ReplyHeader{Xid: req.Xid, Zxid: 1}).Encode(&w)
		jute.EndFrame(&w, at2)
		if _, err := c.Write(w.Buf); err != nil {
			return
		}
		time.Sleep(10 * time.Second)
	}()
	dial := func(timeout time.Duration) (net.Conn, error) {
		return net.DialTimeout("tcp", ln.Addr().String(), timeout)
	}
	s, err := Open(Config{Dial: dial, Path: "/", Recursive: true, Timeout: 600 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case _, ok := <-s.Events():
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("the stream stayed open 5 s after the member fell silent (timeout 600 ms)")
		}
	}
}
