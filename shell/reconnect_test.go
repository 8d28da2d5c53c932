package shell

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/testing/tcpproxy"
)

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
	proxy := tcpproxy.Start(t, addr)

	pr, pw := io.Pipe()
	var out syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- Run(Options{Server: proxy.Addr(), Timeout: 20 * time.Second}, nil, "", pr, &out, &out)
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

	proxy.Cut()
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
	proxy := tcpproxy.Start(t, addr)
	pr, pw := io.Pipe()
	var out syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- Run(Options{Server: proxy.Addr(), Timeout: 4 * time.Second}, nil, "", pr, &out, &out)
	}()
	send := func(line string) {
		if _, err := io.WriteString(pw, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send("create /t_expire")
	send("create -e /t_expire/e")
	waitFor(t, &out, "Created /t_expire/e", 1)

	proxy.Refuse(true)
	proxy.Cut()
	waitFor(t, &out, "WatchedEvent state:Disconnected type:None path:null", 1)
	time.Sleep(7 * time.Second) // > 4 s session timeout, plus the server's expiry tick
	proxy.Refuse(false)
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
