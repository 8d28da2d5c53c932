package session

import (
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/rawclient"
	"github.com/zkraft/zkraft/jute"
)

// dialInProcess opens an in-process connection to ts as from remoteIP.
func dialInProcess(t testing.TB, ts *testServer, remoteIP string) *rawclient.Client {
	t.Helper()
	nc, err := ts.srv.DialInProcess(remoteIP)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return rawclient.New(t, nc)
}

// dialFrom opens a TCP connection to addr from the loopback address src.
func dialFrom(t testing.TB, src, addr string) *rawclient.Client {
	t.Helper()
	d := net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return rawclient.New(t, nc)
}

// TestInProcessConnsTakeNoSlots: in-process connections (the console's)
// count neither against maxClientCnxns, even from the address the
// listener's clients have, nor against maxCnxns; the listener's clients
// are admitted and refused exactly as without them, before and after
// the in-process connections close (issue #37: console logins filled
// 127.0.0.1's slots).
func TestInProcessConnsTakeNoSlots(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.MaxClientCnxns, c.MaxCnxns = 2, 3 })
	var inproc []*rawclient.Client
	for range 20 {
		c := dialInProcess(t, ts, "127.0.0.1")
		if resp := c.Connect(false); resp.SessionID == 0 {
			t.Fatal("an in-process connection got no session")
		}
		inproc = append(inproc, c)
	}
	a, b := dialFrom(t, "127.0.0.1", ts.addr), dialFrom(t, "127.0.0.1", ts.addr)
	a.Connect(false)
	b.Connect(false)
	dialFrom(t, "127.0.0.1", ts.addr).ExpectClosed() // maxClientCnxns
	dialFrom(t, "127.0.0.2", ts.addr).Connect(false)
	dialFrom(t, "127.0.0.3", ts.addr).ExpectClosed() // maxCnxns
	if n := ts.srv.NumConnections(); n != 23 {
		t.Fatalf("%d connections, want 3 from the listener and 20 in-process", n)
	}

	for _, c := range inproc {
		c.Conn.Close()
	}
	waitFor(t, "the in-process connections are torn down", func() bool { return ts.srv.NumConnections() == 3 })
	ts.srv.mu.Lock()
	perIP := ts.srv.perIP["127.0.0.1"]
	ts.srv.mu.Unlock()
	if perIP != 2 {
		t.Fatalf("127.0.0.1 counted %d connections after the in-process ones closed, want 2", perIP)
	}
	dialFrom(t, "127.0.0.1", ts.addr).ExpectClosed()
}

// TestInProcessIdentity: an in-process connection's ip identity is the
// address it was served as from, not the loopback its socket has: a node
// whose ACL names ip:10.1.2.3 is read by a session from there and refused
// to one from 127.0.0.1, over the listener or in-process; cons names the
// address.
func TestInProcessIdentity(t *testing.T) {
	ts := startServer(t)
	setup := rawclient.Dial(t, ts.addr)
	setup.Connect(false)
	only := []jute.ACL{{Perms: jute.PermRead, ID: jute.Id{Scheme: "ip", ID: "10.1.2.3"}}}
	setup.Request(1, jute.OpCreate, &jute.CreateRequest{Path: "/browser", Data: []byte("b"), ACL: only})
	if h := setup.Reply(nil); h.Err != jute.OK {
		t.Fatalf("create: %+v", h)
	}
	read := func(c *rawclient.Client) jute.ErrCode {
		c.Request(2, jute.OpGetData, &jute.PathWatchRequest{Path: "/browser"})
		return c.Reply(&jute.GetDataResponse{}).Err
	}
	if err := read(setup); err != jute.ErrNoAuth {
		t.Fatalf("a loopback client read ip:10.1.2.3's node: %v", err)
	}
	loop := dialInProcess(t, ts, "127.0.0.1")
	loop.Connect(false)
	if err := read(loop); err != jute.ErrNoAuth {
		t.Fatalf("an in-process session from 127.0.0.1 read ip:10.1.2.3's node: %v", err)
	}
	browser := dialInProcess(t, ts, "10.1.2.3")
	browser.Connect(false)
	if err := read(browser); err != jute.OK {
		t.Fatalf("an in-process session from 10.1.2.3: %v", err)
	}
	found := false
	for _, c := range ts.srv.Connections() {
		found = found || strings.HasPrefix(c.Remote, "10.1.2.3:")
	}
	if !found {
		t.Fatalf("cons does not name 10.1.2.3: %+v", ts.srv.Connections())
	}
}

// TestInProcessConnLifecycle: an in-process connection idle for longer
// than parkAfter is still answered (it waits in its goroutine: a pipe has
// no fd to park); DropClients closes it; Close finishes with one open;
// ServeConn after Close is refused.
func TestInProcessConnLifecycle(t *testing.T) {
	ts := startServer(t)
	c := dialInProcess(t, ts, "192.0.2.1")
	c.Connect(false)
	time.Sleep(parkAfter + 200*time.Millisecond)
	c.Request(1, jute.OpExists, &jute.PathWatchRequest{Path: "/zookeeper"})
	if h := c.Reply(&jute.StatResponse{}); h.Err != jute.OK || h.Xid != 1 {
		t.Fatalf("exists after an idle while: %+v", h)
	}
	ts.srv.DropClients("test")
	c.ExpectClosed()
	waitFor(t, "the dropped connection is torn down", func() bool { return ts.srv.NumConnections() == 0 })

	open := dialInProcess(t, ts, "192.0.2.1")
	open.Connect(false)
	closed := make(chan struct{})
	go func() { ts.srv.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not finish an open in-process connection")
	}
	open.ExpectClosed()
	if _, err := ts.srv.DialInProcess("192.0.2.1"); !errors.Is(err, ErrServerClosed) {
		t.Fatalf("DialInProcess after Close: %v", err)
	}
}

// TestInProcessConnsHoldNoFD: in-process connections take no file
// descriptor (the process's are divided between its listeners and the
// member's files and peers, and console sessions must not eat into them).
func TestInProcessConnsHoldNoFD(t *testing.T) {
	if _, err := os.ReadDir("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd here")
	}
	ts := startServer(t)
	dialInProcess(t, ts, "192.0.2.1").Connect(false) // the server's first-use goroutines and fds
	fds := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(ents)
	}
	before := fds()
	for range 50 {
		dialInProcess(t, ts, "192.0.2.1").Connect(false)
	}
	if n := fds() - before; n > 5 {
		t.Fatalf("50 in-process sessions hold %d more file descriptors", n)
	}
}
