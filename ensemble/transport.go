package ensemble

import (
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	"go.uber.org/zap"

	"github.com/zkraft/zkraft/internal/base/netguard"
)

// The member port carries three protocols. Every connection opens with a
// 5-byte header: the magic "ZKR", the peer protocol version, and the stream
// kind; version 2 adds the hello exchange of handshake.go, version 1 (a
// zkraft v0.1 member) has none. Raft's NetworkTransport protocol follows a streamRaft header (votes,
// snapshots, leadership transfer), Raft's AppendEntries in zkraft's own
// encoding follow streamAppend (appendcodec.go), and zkraft's forwarding
// protocol (writes, session touches, read barriers) follows streamFwd.
const (
	peerMagic    = "ZKR"
	streamRaft   = 'R'
	streamFwd    = 'F'
	streamAppend = 'A'
	// streamProbe only runs the handshake: how a member learns another's
	// build level (Node.RaiseLevel).
	streamProbe  = 'P'
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
	// gate decides the handshakes (identity.go); nil admits everyone.
	gate gate
	// legacy remembers, per address, until when it is dialed with the
	// version-1 header (a level-1 member closed a version-2 one).
	legacyMu sync.Mutex
	legacy   map[string]time.Time
	// idle is memberIdle (idleconn.go); tests shorten it. Streams accepted
	// from level-2 members are closed after that long without a byte, and
	// Raft's streams dialed are retired after half of it.
	idle atomic.Int64
}

// legacyFor is how long a member that closed a version-2 header is dialed
// with version 1 before version 2 is tried again (it may be upgraded).
const legacyFor = 5 * time.Second

// newMux serves ln, guarded (guardMemberPort, with DefaultMemberConns and
// no log when it is not already), its handshakes decided by g (nil: a
// zero hello, everyone admitted).
func newMux(ln net.Listener, dial Dialer, g gate) *mux {
	if _, ok := ln.(*netguard.Listener); !ok {
		ln = guardMemberPort(ln, &Config{MemberConns: DefaultMemberConns}, nil)
	}
	m := &mux{ln: ln, dial: dial, raftCh: make(chan net.Conn), fwdCh: make(chan net.Conn), appendCh: make(chan net.Conn), done: make(chan struct{}),
		legacy: make(map[string]time.Time), gate: g}
	m.idle.Store(int64(memberIdle))
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
	if _, err := io.ReadFull(c, h[:]); err != nil || string(h[:3]) != peerMagic {
		c.Close()
		return
	}
	timed := false
	switch h[3] {
	case peerVersionHello:
		if !m.acceptHello(c) {
			c.Close()
			return
		}
		timed = true
	case peerVersionLegacy:
		if m.gate != nil && m.gate.admitLegacy(c.RemoteAddr().String(), false) != nil {
			c.Close()
			return
		}
	default:
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
	case streamProbe:
		c.Close() // the handshake was all it asked for
		return
	default:
		c.Close()
		return
	}
	if idle := time.Duration(m.idle.Load()); timed && idle > 0 {
		c = newIdleConn(c, idle)
	}
	select {
	case ch <- c:
	case <-m.done:
		c.Close()
	}
}

// open dials addr, writes the header for kind and runs the handshake: a
// version-2 header and hello, or a version-1 header alone to a member that
// closed a version-2 one (a level-1 member) while the gate lets this member
// talk to one.
func (m *mux) open(addr string, kind byte, timeout time.Duration) (net.Conn, error) {
	c, _, err := m.openLevel(addr, kind, timeout)
	return c, err
}

// openLevel is open, also telling the peer's hello (Build 1 for a level-1 peer).
func (m *mux) openLevel(addr string, kind byte, timeout time.Duration) (net.Conn, hello, error) {
	deadline := time.Now().Add(timeout)
	if !m.isLegacy(addr) {
		c, err := m.dial(addr, timeout)
		if err != nil {
			return nil, hello{}, fmt.Errorf("ensemble: dial member %s: %w", addr, err)
		}
		var self hello
		if m.gate != nil {
			self = m.gate.local()
		}
		b := append(make([]byte, 0, headerLen+helloLen), peerMagic[0], peerMagic[1], peerMagic[2], peerVersionHello, kind)
		b = self.append(b)
		_ = c.SetWriteDeadline(deadline)
		if _, err := c.Write(b); err != nil {
			c.Close()
			return nil, hello{}, fmt.Errorf("ensemble: member %s header: %w", addr, err)
		}
		_ = c.SetWriteDeadline(time.Time{})
		peer, legacy, err := m.dialHello(c, addr, deadline)
		if err == nil && !legacy {
			return c, peer, nil
		}
		c.Close()
		if err != nil {
			return nil, hello{}, err
		}
		if m.gate != nil {
			if err := m.gate.admitLegacy(addr, true); err != nil {
				return nil, hello{}, err // not remembered: at level 2 only version 2 is tried
			}
		}
		m.setLegacy(addr)
	} else if m.gate != nil {
		if err := m.gate.admitLegacy(addr, true); err != nil {
			return nil, hello{}, err
		}
	}
	c, err := m.dial(addr, time.Until(deadline))
	if err != nil {
		return nil, hello{}, fmt.Errorf("ensemble: dial member %s: %w", addr, err)
	}
	_ = c.SetWriteDeadline(deadline)
	if _, err := c.Write([]byte{peerMagic[0], peerMagic[1], peerMagic[2], peerVersionLegacy, kind}); err != nil {
		c.Close()
		return nil, hello{}, fmt.Errorf("ensemble: member %s header: %w", addr, err)
	}
	_ = c.SetWriteDeadline(time.Time{})
	return c, hello{Build: LevelLegacy}, nil
}

// isLegacy reports whether addr is to be dialed with the version-1 header.
func (m *mux) isLegacy(addr string) bool {
	m.legacyMu.Lock()
	defer m.legacyMu.Unlock()
	until, ok := m.legacy[addr]
	if ok && time.Now().After(until) {
		delete(m.legacy, addr)
		return false
	}
	return ok
}

// forgetLegacy makes the next connection to addr try version 2 again.
func (m *mux) forgetLegacy(addr string) {
	m.legacyMu.Lock()
	delete(m.legacy, addr)
	m.legacyMu.Unlock()
}

func (m *mux) setLegacy(addr string) {
	m.legacyMu.Lock()
	m.legacy[addr] = time.Now().Add(legacyFor)
	m.legacyMu.Unlock()
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

// Dial implements raft.StreamLayer. NetworkTransport pools what it dials
// between elections; each stream is retired before its peer's idle limit
// (retiringConn).
func (l raftLayer) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	c, err := l.m.open(string(addr), streamRaft, timeout)
	idle := time.Duration(l.m.idle.Load())
	if err != nil || idle <= 0 {
		return c, err
	}
	return newRetiringConn(c, idle/2), nil
}
