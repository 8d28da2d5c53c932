package shell

import (
	"bytes"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// cutProxy forwards TCP connections to a server and can drop them all,
// simulating a network failure without touching the server.
type cutProxy struct {
	l      net.Listener
	mu     sync.Mutex
	conns  []net.Conn
	paused bool // refuse new connections (accept and close them)
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{l: l}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			paused := p.paused
			p.mu.Unlock()
			if paused {
				c.Close()
				continue
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(s, c); s.Close() }()
			go func() { _, _ = io.Copy(c, s); c.Close() }()
		}
	}()
	t.Cleanup(func() { l.Close(); p.cut() })
	return p
}

func (p *cutProxy) addr() string { return p.l.Addr().String() }

func (p *cutProxy) pause(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.paused = on
}

func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// syncBuffer is a bytes.Buffer safe for the shell's writers and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// waitFor waits until out contains want n times.
func waitFor(t *testing.T, out *syncBuffer, want string, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Count(out.String(), want) >= n {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %d× %q in:\n%s", n, want, out.String())
}

// TestReconnect cuts the connection under a running shell: it must report
// the loss and the reconnect as zkCli does (Disconnected, SyncConnected),
// keep its session, and re-arm its persistent watch (sent through the tap as
// SetWatches2, which go-zookeeper does not know).
func TestReconnect(t *testing.T) {
	addr := testServer(t)
	resetRoot(t, addr, "/t_reconnect")
	t.Cleanup(func() { resetRoot(t, addr, "/t_reconnect") })
	proxy := newCutProxy(t, addr)

	pr, pw := io.Pipe()
	var out syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- Run(Options{Server: proxy.addr(), Timeout: 20 * time.Second}, nil, "", pr, &out, &out)
	}()
	send := func(line string) {
		if _, err := io.WriteString(pw, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send("create /t_reconnect x")
	waitFor(t, &out, "Created /t_reconnect", 1)
	send("create -e /t_reconnect/eph")
	waitFor(t, &out, "Created /t_reconnect/eph", 1)
	send("addWatch /t_reconnect")
	send("get -w /t_reconnect")
	waitFor(t, &out, "\nx\n", 1)

	proxy.cut()
	waitFor(t, &out, "WatchedEvent state:Disconnected type:None path:null", 1)
	waitFor(t, &out, "WatchedEvent state:SyncConnected type:None path:null", 2)

	// The session survived: the ephemeral is still ours.
	send("getEphemerals /t_reconnect")
	waitFor(t, &out, "[/t_reconnect/eph]", 1)

	// Both watches are back: the one-shot one (go-zookeeper's SetWatches)
	// and the persistent recursive one (the tap's SetWatches2).
	c, _, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(quietLogger{}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Set("/t_reconnect", []byte("y"), -1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, &out, "type:NodeDataChanged path:/t_reconnect ", 1)
	if _, err := c.Create("/t_reconnect/child", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, &out, "type:NodeCreated path:/t_reconnect/child ", 1)

	send("quit")
	pw.Close()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("shell did not exit")
	}
}

// TestExpiry keeps the shell away from the server longer than its session
// timeout: as in zkCli the session then ends (Expired event, CLOSED, "Not
// connected") until connect opens a new one.
func TestExpiry(t *testing.T) {
	addr := testServer(t)
	resetRoot(t, addr, "/t_expire")
	t.Cleanup(func() { resetRoot(t, addr, "/t_expire") })
	proxy := newCutProxy(t, addr)
	pr, pw := io.Pipe()
	var out syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- Run(Options{Server: proxy.addr(), Timeout: 4 * time.Second}, nil, "", pr, &out, &out)
	}()
	send := func(line string) {
		if _, err := io.WriteString(pw, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send("create /t_expire")
	send("create -e /t_expire/e")
	waitFor(t, &out, "Created /t_expire/e", 1)

	proxy.pause(true)
	proxy.cut()
	waitFor(t, &out, "WatchedEvent state:Disconnected type:None path:null", 1)
	time.Sleep(7 * time.Second) // > 4 s session timeout, plus the server's expiry tick
	proxy.pause(false)
	waitFor(t, &out, "WatchedEvent state:Expired type:None path:null", 1)
	send("ls /t_expire")
	waitFor(t, &out, "Not connected", 1)
	send("connect")
	send("ls /t_expire")
	waitFor(t, &out, "[]\n", 1)
	send("quit")
	pw.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("shell did not exit")
	}
}
