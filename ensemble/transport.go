package ensemble

import (
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/raft"
	"go.uber.org/zap"

	"github.com/zkraft/zkraft/internal/base/netguard"
)

// The member port carries three protocols. Every connection opens with a
// 5-byte header: the magic "ZKR", the peer protocol version, and the stream
// kind. Raft's NetworkTransport protocol follows a streamRaft header (votes,
// snapshots, leadership transfer), Raft's AppendEntries in zkraft's own
// encoding follow streamAppend (appendcodec.go), and zkraft's forwarding
// protocol (writes, session touches, read barriers) follows streamFwd.
const (
	peerMagic    = "ZKR"
	peerVersion  = 1
	streamRaft   = 'R'
	streamFwd    = 'F'
	streamAppend = 'A'
	headerLen    = 5
	headerLimits = 5 * time.Second
)

// Dialer opens a connection to a member address. Tests substitute one that
// injects partitions and delays.
type Dialer func(addr string, timeout time.Duration) (net.Conn, error)

func defaultDialer(addr string, timeout time.Duration) (net.Conn, error) {
	return net.DialTimeout("tcp", addr, timeout)
}

// DefaultMemberConns caps the member port when Config.MemberConns does
// not: more than any ensemble's members hold, few enough that a flood
// cannot take the process's file descriptors (cmd/zkraft sets the caps
// from the file limit, netguard.Plan).
var DefaultMemberConns = netguard.Limits{MaxConns: 1024, MaxConnsPerIP: 64}

// guardMemberPort wraps the member port: an accept error (EMFILE,
// ECONNABORTED...) is retried with a backoff, logged once per interval and
// counted in cfg.Rejected, and connections past cfg.MemberConns are
// closed at once. A connection admitted still has headerLimits to send
// its header (route).
func guardMemberPort(ln net.Listener, cfg *Config, log *zap.Logger) net.Listener {
	return netguard.Wrap(ln, netguard.Config{Name: "member", Limits: cfg.MemberConns, Logger: log, Rejected: cfg.Rejected})
}

// mux accepts member connections and routes them by their header.
type mux struct {
	ln     net.Listener
	dial   Dialer
	raftCh chan net.Conn
	fwdCh  chan net.Conn
	// appendCh carries Raft's AppendEntries streams (appendtransport.go).
	appendCh chan net.Conn
	done     chan struct{}
	once     sync.Once
}

// newMux serves ln, guarded (guardMemberPort, with DefaultMemberConns and
// no log when it is not already).
func newMux(ln net.Listener, dial Dialer) *mux {
	if _, ok := ln.(*netguard.Listener); !ok {
		ln = guardMemberPort(ln, &Config{MemberConns: DefaultMemberConns}, nil)
	}
	m := &mux{ln: ln, dial: dial, raftCh: make(chan net.Conn), fwdCh: make(chan net.Conn), appendCh: make(chan net.Conn), done: make(chan struct{})}
	go m.acceptLoop()
	return m
}

// acceptLoop routes the member port's connections until it is closed
// (the guard retries every other accept error).
func (m *mux) acceptLoop() {
	for {
		c, err := m.ln.Accept()
		if err != nil {
			return
		}
		go m.route(c)
	}
}

// route reads a connection's header and hands it to its protocol.
func (m *mux) route(c net.Conn) {
	var h [headerLen]byte
	_ = c.SetReadDeadline(time.Now().Add(headerLimits))
	if _, err := io.ReadFull(c, h[:]); err != nil || string(h[:3]) != peerMagic || h[3] != peerVersion {
		c.Close()
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	var ch chan net.Conn
	switch h[4] {
	case streamRaft:
		ch = m.raftCh
	case streamFwd:
		ch = m.fwdCh
	case streamAppend:
		ch = m.appendCh
	default:
		c.Close()
		return
	}
	select {
	case ch <- c:
	case <-m.done:
		c.Close()
	}
}

// open dials addr and writes the header for kind.
func (m *mux) open(addr string, kind byte, timeout time.Duration) (net.Conn, error) {
	c, err := m.dial(addr, timeout)
	if err != nil {
		return nil, fmt.Errorf("ensemble: dial member %s: %w", addr, err)
	}
	_ = c.SetWriteDeadline(time.Now().Add(timeout))
	if _, err := c.Write([]byte{peerMagic[0], peerMagic[1], peerMagic[2], peerVersion, kind}); err != nil {
		c.Close()
		return nil, fmt.Errorf("ensemble: member %s header: %w", addr, err)
	}
	_ = c.SetWriteDeadline(time.Time{})
	return c, nil
}

func (m *mux) close() {
	m.once.Do(func() {
		close(m.done)
		m.ln.Close()
	})
}

// raftLayer is the raft.StreamLayer over the mux.
type raftLayer struct{ m *mux }

var _ raft.StreamLayer = raftLayer{}

// Accept implements net.Listener.
func (l raftLayer) Accept() (net.Conn, error) {
	select {
	case c := <-l.m.raftCh:
		return c, nil
	case <-l.m.done:
		return nil, net.ErrClosed
	}
}

// Close implements net.Listener.
func (l raftLayer) Close() error { l.m.close(); return nil }

// Addr implements net.Listener.
func (l raftLayer) Addr() net.Addr { return l.m.ln.Addr() }

// Dial implements raft.StreamLayer.
func (l raftLayer) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return l.m.open(string(addr), streamRaft, timeout)
}
