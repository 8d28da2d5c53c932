package watchconn

import (
	"bufio"
	"net"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// TestOpenSendsAuthThenAddWatch: Open sends each credential, then an
// addWatch of the asked mode on the path, and notes the zxid the
// addWatch reply carries; a notification after it is handed on with its
// zxid and ZooKeeper's name.
func TestOpenSendsAuthThenAddWatch(t *testing.T) {
	for _, recursive := range []bool{false, true} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		type seen struct {
			auth string
			path string
			mode int32
		}
		got := make(chan seen, 1)
		go func() {
			server, err := ln.Accept()
			if err != nil {
				return
			}
			defer server.Close()
			br := bufio.NewReader(server)
			if _, err := jute.ReadFrame(br, nil, MaxFrame); err != nil {
				return
			}
			reply := func(xid int32, zxid int64, rec jute.Record) {
				var w jute.Writer
				at := jute.BeginFrame(&w)
				(&jute.ReplyHeader{Xid: xid, Zxid: zxid}).Encode(&w)
				if rec != nil {
					rec.Encode(&w)
				}
				jute.EndFrame(&w, at)
				_, _ = server.Write(w.Buf)
			}
			var w jute.Writer
			at := jute.BeginFrame(&w)
			(&jute.ConnectResponse{TimeOut: 30000, SessionID: 7, Passwd: make([]byte, 16)}).Encode(&w)
			jute.EndFrame(&w, at)
			_, _ = server.Write(w.Buf)
			var s seen
			for {
				frame, err := jute.ReadFrame(br, nil, MaxFrame)
				if err != nil {
					return
				}
				r := jute.NewReader(frame)
				var hdr jute.RequestHeader
				if hdr.Decode(r) != nil {
					return
				}
				switch hdr.Type {
				case jute.OpAuth:
					var a jute.AuthPacket
					_ = a.Decode(r)
					s.auth = a.Scheme + ":" + string(a.Auth)
					reply(hdr.Xid, 0, nil)
				case jute.OpAddWatch:
					var p jute.PathTypeRequest
					_ = p.Decode(r)
					s.path, s.mode = p.Path, p.Type
					reply(hdr.Xid, 0x41, nil)
					got <- s
					reply(jute.XidNotification, 0x42, &jute.WatcherEvent{Type: jute.EventNodeDataChanged, State: 3, Path: "/w/x"})
				}
			}
		}()
		dial := func(d time.Duration) (net.Conn, error) { return net.DialTimeout("tcp", ln.Addr().String(), d) }
		s, err := Open(Config{Dial: dial, Path: "/w", Recursive: recursive, Timeout: 30 * time.Second,
			Auth: []Credential{{Scheme: "digest", Auth: []byte("u:p")}}})
		if err != nil {
			t.Fatal(err)
		}
		want := seen{auth: "digest:u:p", path: "/w", mode: jute.AddWatchPersistent}
		if recursive {
			want.mode = jute.AddWatchPersistentRecursive
		}
		if g := <-got; g != want {
			t.Errorf("recursive=%v: server saw %+v, want %+v", recursive, g, want)
		}
		if s.ID() != 7 || s.Armed() != 0x41 {
			t.Errorf("session %d armed at %#x, want 7 at 0x41", s.ID(), s.Armed())
		}
		ev := <-s.Events()
		if ev.TypeName() != "NodeDataChanged" || ev.Path != "/w/x" || ev.Zxid != 0x42 {
			t.Errorf("event %+v (%s), want NodeDataChanged /w/x 0x42", ev, ev.TypeName())
		}
		s.Close()
	}
}
