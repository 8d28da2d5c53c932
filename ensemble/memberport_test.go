package ensemble

import (
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/zkraft/zkraft/internal/base/netguard"
)

// emfileListener fails its first n accepts as a process out of file
// descriptors does, then accepts from the real listener.
type emfileListener struct {
	net.Listener
	mu sync.Mutex
	n  int
}

func (l *emfileListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	if l.n > 0 {
		l.n--
		l.mu.Unlock()
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	l.mu.Unlock()
	return l.Listener.Accept()
}

// TestMemberPortGuarded: the member port rides out accept errors (backing
// off, counting them, logging once), refuses connections past its caps
// (counted too), and routes the connections it admits.
func TestMemberPortGuarded(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zapcore.InfoLevel)
	cfg := &Config{MemberConns: netguard.Limits{MaxConns: 2, MaxConnsPerIP: 2}, Rejected: new(netguard.Rejections)}
	m := newMux(guardMemberPort(&emfileListener{Listener: ln, n: 5}, cfg, zap.New(core)), defaultDialer, nil)
	defer m.close()
	addr := ln.Addr().String()

	// Two streams are admitted and routed by their header.
	for range 2 {
		c, err := m.open(addr, streamRaft, 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		select {
		case got := <-m.raftCh:
			defer got.Close()
		case <-time.After(10 * time.Second):
			t.Fatal("an admitted stream was not routed")
		}
	}
	// A third is closed at once, long before the header's deadline would
	// close it.
	over, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer over.Close()
	_ = over.SetReadDeadline(time.Now().Add(headerLimits / 2))
	if _, err := io.Copy(io.Discard, over); err != nil {
		t.Fatalf("the connection past the cap was not closed at once: %v", err)
	}
	if got := cfg.Rejected.Total(); got != 6 {
		t.Errorf("rejections = %d, want 6 (5 failed accepts, 1 refused)", got)
	}
	if n := logs.FilterMessageSnippet("accepting a connection failed").Len(); n != 1 {
		t.Errorf("%d lines about 5 failed accepts, want 1", n)
	}
	if n := logs.FilterMessageSnippet("too many connections").Len(); n != 1 {
		t.Errorf("%d lines about the refused connection, want 1", n)
	}
}
