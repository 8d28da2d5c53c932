package session

import (
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/internal/testing/rawclient"
)

// flakyListener fails its first accepts with errs (what a process out of
// file descriptors, or a kernel short of buffers, reports), then accepts
// from the real listener.
type flakyListener struct {
	net.Listener
	mu   sync.Mutex
	errs []error
}

func (f *flakyListener) Accept() (net.Conn, error) {
	f.mu.Lock()
	if len(f.errs) > 0 {
		err := f.errs[0]
		f.errs = f.errs[1:]
		f.mu.Unlock()
		return nil, err
	}
	f.mu.Unlock()
	return f.Listener.Accept()
}

func acceptErrno(errno syscall.Errno) error {
	return &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", errno)}
}

// startServerOn is startServer serving ln (Serve's error goes to served).
func startServerOn(t *testing.T, ln net.Listener, mutate func(*Config)) (*Server, <-chan error) {
	t.Helper()
	node, err := ensemble.Open(ensemble.Config{DataDir: t.TempDir(), TickTime: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{TickTime: 200 * time.Millisecond, FourLetterWhitelist: []string{"*"}}
	if mutate != nil {
		mutate(&cfg)
	}
	srv := New(cfg, node)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		node.Close()
	})
	return srv, served
}

// TestServeSurvivesAcceptErrors: EMFILE, ENFILE, ECONNABORTED and ENOBUFS
// from accept do not stop the client port (they stopped the server: a
// flood on another port that used up the file descriptors made the next
// accept here fail, and zkraft exit); it goes on serving, and counts each
// in connection_rejected.
func TestServeSurvivesAcceptErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fl := &flakyListener{Listener: ln, errs: []error{
		acceptErrno(syscall.EMFILE), acceptErrno(syscall.ENFILE),
		acceptErrno(syscall.ECONNABORTED), acceptErrno(syscall.ENOBUFS),
	}}
	srv, served := startServerOn(t, fl, nil)
	c := rawclient.Dial(t, ln.Addr().String())
	if resp := c.Connect(false); resp.SessionID == 0 {
		t.Fatal("no session after the accept errors")
	}
	select {
	case err := <-served:
		t.Fatalf("Serve returned after accept errors: %v", err)
	default:
	}
	if got := srv.Rejections().Total(); got != 4 {
		t.Errorf("connection_rejected = %d after 4 failed accepts, want 4", got)
	}
	srv.Close()
	if err := <-served; err != nil {
		t.Errorf("Serve after Close: %v, want nil", err)
	}
}

// TestRefusalsLoggedOncePerInterval: a flood of connections past
// maxClientCnxns is refused one by one and counted, but warned about once
// per interval, not once per connection.
func TestRefusalsLoggedOncePerInterval(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := startServerOn(t, ln, func(c *Config) {
		c.MaxClientCnxns = 1
		c.Logger = zap.New(core)
	})
	addr := ln.Addr().String()
	rawclient.Dial(t, addr).Connect(false)
	const refused = 20
	for range refused {
		rawclient.Dial(t, addr).ExpectClosed()
	}
	if got := srv.Rejections().Total(); got != refused {
		t.Errorf("connection_rejected = %d, want %d", got, refused)
	}
	if n := logs.FilterMessage("too many connections from client").Len(); n != 1 {
		t.Errorf("%d warnings for %d refused connections, want 1", n, refused)
	}
}

// TestConnLimit: the client ports' share of the file limit caps them when
// maxCnxns is 0 (ZooKeeper's default, no limit) or higher, and maxCnxns
// applies when lower.
func TestConnLimit(t *testing.T) {
	for _, tc := range []struct{ maxCnxns, connLimit, want int }{
		{0, 0, 0}, {0, 2, 2}, {5, 2, 2}, {1, 2, 1}, {3, 0, 3},
	} {
		c := Config{MaxCnxns: tc.maxCnxns, ConnLimit: tc.connLimit}
		if got := c.connCap(); got != tc.want {
			t.Errorf("maxCnxns %d, ConnLimit %d: cap %d, want %d", tc.maxCnxns, tc.connLimit, got, tc.want)
		}
	}
	ts := startServer(t, func(c *Config) { c.ConnLimit = 2 })
	a, b := rawclient.Dial(t, ts.addr), rawclient.Dial(t, ts.addr)
	a.Connect(false)
	b.Connect(false)
	rawclient.Dial(t, ts.addr).ExpectClosed()
	if got := ts.srv.Rejections().Total(); got != 1 {
		t.Errorf("connection_rejected = %d, want 1", got)
	}
}
