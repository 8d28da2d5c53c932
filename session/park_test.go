package session

import (
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/rawclient"
	"github.com/zkraft/zkraft/jute"
)

// parkedCount is how many connections the parker holds.
func parkedCount(s *Server) int {
	if s.parker == nil {
		return 0
	}
	s.parker.mu.Lock()
	defer s.parker.mu.Unlock()
	return len(s.parker.byFD)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestParkedConnectionServes: a connection idle for parkAfter is parked
// without a goroutine; it still gets its watch events, is answered when a
// request comes, each time it was parked, and is torn down when its client
// goes away or the server closes.
func TestParkedConnectionServes(t *testing.T) {
	ts := startServer(t)
	if ts.srv.parker == nil {
		t.Skip("no parker on this platform")
	}
	// Sessions that outlive the test: rawclient does not ping, and an
	// expired session's connection leaves the parker's set.
	c := rawclient.Dial(t, ts.addr)
	c.ConnectFor(60000)
	c.Request(1, jute.OpCreate, &jute.CreateRequest{Path: "/p", Data: []byte("a"), ACL: openACL})
	c.Request(2, jute.OpGetData, &jute.PathWatchRequest{Path: "/p", Watch: true})
	for i := 0; i < 2; i++ {
		if h := c.Reply(nil); h.Err != jute.OK {
			t.Fatalf("%+v", h)
		}
	}
	waitFor(t, "the idle connection is parked", func() bool { return parkedCount(ts.srv) == 1 })

	other := rawclient.Dial(t, ts.addr)
	other.ConnectFor(60000)
	other.Request(1, jute.OpSetData, &jute.SetDataRequest{Path: "/p", Data: []byte("b"), Version: -1})
	if h := other.Reply(nil); h.Err != jute.OK {
		t.Fatalf("setData: %+v", h)
	}
	if h := c.Reply(nil); h.Xid != jute.XidNotification {
		t.Fatalf("the parked connection got %+v, want its watch event", h)
	}
	var resp jute.GetDataResponse
	c.Request(3, jute.OpGetData, &jute.PathWatchRequest{Path: "/p"})
	if h := c.Reply(&resp); h.Err != jute.OK || h.Xid != 3 || string(resp.Data) != "b" {
		t.Fatalf("getData after parking: %+v %q", h, resp.Data)
	}
	waitFor(t, "both idle connections are parked", func() bool { return parkedCount(ts.srv) == 2 })
	// Parked again, its socket re-armed in the set it never left: the
	// next request wakes it as the first did.
	c.Request(4, jute.OpGetData, &jute.PathWatchRequest{Path: "/p"})
	if h := c.Reply(&resp); h.Err != jute.OK || h.Xid != 4 {
		t.Fatalf("getData after parking twice: %+v", h)
	}
	waitFor(t, "it is parked a third time", func() bool { return parkedCount(ts.srv) == 2 })
	c.Conn.Close()
	waitFor(t, "the closed connection is torn down", func() bool {
		ts.srv.mu.Lock()
		defer ts.srv.mu.Unlock()
		return len(ts.srv.conns) == 1 && parkedCount(ts.srv) == 1
	})
	closed := make(chan struct{})
	go func() { ts.srv.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not finish a parked connection")
	}
	other.ExpectClosed()
}

// TestParkedConnectionsHoldNoGoroutine: idle connections cost no
// goroutine once parked.
func TestParkedConnectionsHoldNoGoroutine(t *testing.T) {
	ts := startServer(t)
	if ts.srv.parker == nil {
		t.Skip("no parker on this platform")
	}
	before := runtime.NumGoroutine()
	const n = 50
	for i := 0; i < n; i++ {
		rawclient.Dial(t, ts.addr).Connect(false)
	}
	waitFor(t, "every idle connection is parked", func() bool { return parkedCount(ts.srv) == n })
	time.Sleep(50 * time.Millisecond)
	if extra := runtime.NumGoroutine() - before; extra > n/5 {
		t.Fatalf("%d idle connections hold %d goroutines", n, extra)
	}
}

// A connection whose writer is already taking it down (kill, or a close
// after a flush) is not parked: the writer's unpark may have run already,
// and its socket, closed next, would leave the parker's set without an
// event, leaving the connection parked for good and Server.Close waiting
// for its reader forever.
func TestParkRefusesAConnectionGoingAway(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the parker is Linux's (epoll)")
	}
	ts := startServer(t)
	if ts.srv.parker == nil {
		t.Fatal("no parker on Linux")
	}
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fds[0])
	defer syscall.Close(fds[1])
	c := &conn{srv: ts.srv, out: newOutbound(nil), parkedFD: -1, watchedFD: -1}
	c.out.kill()
	if ts.srv.parker.park(fds[0], c) {
		ts.srv.parker.take(int32(fds[0]), c) // this fake connection has no reader to resume
		t.Fatal("a killed connection was parked")
	}
	if n := parkedCount(ts.srv); n != 0 {
		t.Fatalf("%d connections parked", n)
	}
}
