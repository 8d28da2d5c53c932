package watchconn

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// TestSessionEndsWhenBehind: a watch session whose events are not
// taken fast enough hands on those it holds and then ends, so its user
// (reconnecting) reads the tree again, instead of dropping changes it is
// never told of.
func TestSessionEndsWhenBehind(t *testing.T) {
	client, server := net.Pipe()
	defer server.Close()
	go func() { _, _ = io.Copy(io.Discard, server) }() // the closeSession
	s := &Session{nc: client, timeout: time.Minute, events: make(chan Event, 2), done: make(chan struct{})}
	go s.readLoop(bufio.NewReader(client))
	go func() {
		for i := 1; i <= 5; i++ {
			var w jute.Writer
			at := jute.BeginFrame(&w)
			(&jute.ReplyHeader{Xid: jute.XidNotification, Zxid: int64(i)}).Encode(&w)
			(&jute.WatcherEvent{Type: jute.EventNodeCreated, State: 3, Path: fmt.Sprintf("/n%d", i)}).Encode(&w)
			jute.EndFrame(&w, at)
			if _, err := server.Write(w.Buf); err != nil {
				return
			}
		}
	}()
	time.Sleep(300 * time.Millisecond) // the reader is behind: nothing taken yet
	var got []string
	timeout := time.After(5 * time.Second)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				if len(got) != 2 || got[0] != "/n1" || got[1] != "/n2" {
					t.Fatalf("handed on %v before ending, want /n1 /n2", got)
				}
				if !errors.Is(s.Err(), ErrBehind) {
					t.Fatalf("ended with %v, want ErrBehind", s.Err())
				}
				return
			}
			got = append(got, ev.Path)
		case <-timeout:
			t.Fatalf("the session went on after dropping changes (handed on %v)", got)
		}
	}
}
