package session

import (
	"crypto/tls"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/backend/audit"
	"github.com/zkraft/zkraft/internal/base/netguard"
	"github.com/zkraft/zkraft/znode"
)

// Server accepts ZooKeeper client connections for one ensemble member.
type Server struct {
	cfg Config
	// be holds the Backend served: one for the server's life, except
	// across a live migration's cutover (SwitchBackend).
	be    atomic.Pointer[backendRef]
	log   *zap.Logger
	stats *serverStats
	thr   throttle // globalOutstandingLimit
	// drops counts DropClients calls: a resume whose handshake began
	// before one binds only to be closed (bind).
	drops atomic.Uint64
	// backlog is the reply bytes queued for every connection
	// (backpressure.go).
	backlog backlog
	// parker holds idle connections without goroutines (nil: it is
	// unavailable, they wait in their own).
	parker *parker
	// refusedAll and refusedIP keep the warnings about refused
	// connections (connCap, maxClientCnxns) to one line per interval: a
	// flood must not become a log storm (the count is in cfg.Rejected).
	refusedAll, refusedIP netguard.RateLog

	nextSession atomic.Int64 // firstSessionID, then +1 (sessionid.go)

	mu        sync.Mutex
	conns     map[*conn]struct{} // accepted on a listener; admit counts them
	inproc    map[*conn]struct{} // in-process connections (inprocess.go); nil until the first
	bySession map[int64]*conn
	// readOnlyConns are the connections bound to read-only sessions,
	// which no expiry closes (closeSilentReadOnly).
	readOnlyConns map[*conn]struct{}
	perIP         map[string]int
	ln            net.Listener // the client port
	secureLn      net.Listener // the secure client port (ServeSecure), if any
	audit         *zap.Logger  // audit events (Config.Audit), nil when off

	// toAnnounce holds the resumed connections whose announcement (bind)
	// is still to be made, with the backend each bound on: one goroutine
	// (announceLoop, running while announcer is set) makes them one at a
	// time, and a connection that goes first leaves it (forget), so it
	// holds at most the connections open here. Both are guarded by mu.
	toAnnounce map[*conn]backend.Backend
	announcer  bool

	closeOnce   sync.Once
	closeParker sync.Once
	closed      chan struct{}
	wg          sync.WaitGroup
}

// New returns a Server for node (an *ensemble.Node, or another Backend).
// Call Serve to accept connections.
func New(cfg Config, node backend.Backend) *Server {
	cfg.setDefaults()
	s := &Server{
		cfg:           cfg,
		log:           cfg.Logger,
		stats:         newServerStats(),
		conns:         make(map[*conn]struct{}),
		bySession:     make(map[int64]*conn),
		readOnlyConns: make(map[*conn]struct{}),
		perIP:         make(map[string]int),
		closed:        make(chan struct{}),
	}
	s.be.Store(&backendRef{node})
	s.thr.init(cfg.OutstandingLimit)
	s.parker = newParker()
	if cfg.Audit {
		s.audit = s.log.Named(audit.LoggerName)
	}
	s.nextSession.Store(firstSessionID(cfg.ServerID, time.Now()))
	node.SetHooks(s.hooks())
	go s.watchQuorum()
	return s
}

// Serve accepts connections on ln until Close. It returns nil after Close.
// An accept error does not end it (guard).
func (s *Server) Serve(ln net.Listener) error {
	gl := s.guard(ln, "client")
	s.mu.Lock()
	s.ln = gl
	s.mu.Unlock()
	return s.accept(gl, acceptMode{name: "client"})
}

// ServeSecure accepts TLS connections on ln (ZooKeeper's secureClientPort)
// until Close: each completes its handshake within handshakeTimeout, and a
// client certificate becomes the connection's x509 identity, as with
// ZooKeeper's X509AuthenticationProvider. It returns nil after Close.
func (s *Server) ServeSecure(ln net.Listener, cfg *tls.Config) error {
	gl := s.guard(ln, "secureClient")
	s.mu.Lock()
	s.secureLn = gl
	s.mu.Unlock()
	return s.accept(gl, acceptMode{tls: cfg, name: "secureClient"})
}

// guard wraps a client port so that no accept error ends it: EMFILE,
// ENFILE, ECONNABORTED, ENOBUFS and the like are retried with a backoff
// (5 ms doubling to 1 s), counted in cfg.Rejected and logged once per
// interval, as ZooKeeper's NIOServerCnxnFactory pauses, counts
// connection_rejected and rate-limits its log. The caps are admit's
// (ZooKeeper's), so connections come back unwrapped.
func (s *Server) guard(ln net.Listener, name string) net.Listener {
	return netguard.Wrap(ln, netguard.Config{Name: name, Logger: s.log, Rejected: s.cfg.Rejected})
}

// accept serves the connections of ln (a guard) until it is closed.
func (s *Server) accept(ln net.Listener, mode acceptMode) error {
	for {
		nc, err := ln.Accept()
		if err != nil {
			select {
			case <-s.closed:
				return nil
			default:
			}
			return fmt.Errorf("session: accept: %w", err) // closed under the server
		}
		c := newConn(s, mode.wrap(nc))
		if mode.unified {
			c.unified = mode.tls
		}
		if why, rl := s.admit(c); why != "" {
			if rl == nil {
				nc.Close() // the server is closing
				continue
			}
			s.cfg.Rejected.Add(mode.name) // before the close its client sees
			if ok, n := rl.Allow(); ok {
				c.logger().Warn(why, zap.Int("maxClientCnxns", s.cfg.MaxClientCnxns), zap.Int("maxCnxns", s.cfg.MaxCnxns),
					zap.Int("connLimit", s.cfg.ConnLimit), zap.Int64("suppressed", n))
			}
			nc.Close()
			continue
		}
		go c.serve()
	}
}

// admit registers c unless the server is closing (then why is set and
// the RateLog nil), at maxCnxns (or ConnLimit, the client ports' share of
// the file limit) or c's IP at maxClientCnxns (checked in that order, as
// ZooKeeper's doAccept); it returns why not, and the RateLog its warning
// goes through, or "". An admitted c counts in wg (done by
// c.finishServe) from here, under mu: Close, which kills every
// registered connection under mu and then waits, either kills c or finds
// it refused, and never waits on a count that rises meanwhile.
func (s *Server) admit(c *conn) (string, *netguard.RateLog) {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.closed:
		return "server closing", nil
	default:
	}
	if n := s.cfg.connCap(); n > 0 && len(s.conns) >= n {
		return "too many connections", &s.refusedAll
	}
	if s.cfg.MaxClientCnxns > 0 && s.perIP[c.remote] >= s.cfg.MaxClientCnxns {
		return "too many connections from client", &s.refusedIP
	}
	s.perIP[c.remote]++
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	return "", nil
}

// forget drops c from every table.
func (s *Server) forget(c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.readOnlyConns, c)
	delete(s.toAnnounce, c) // its client resumes anew, and that bind announces
	if s.forgetInProcessLocked(c) {
		return
	}
	if _, ok := s.conns[c]; !ok {
		return
	}
	delete(s.conns, c)
	if s.perIP[c.remote]--; s.perIP[c.remote] <= 0 {
		delete(s.perIP, c.remote)
	}
	if s.bySession[c.sessionID] == c {
		delete(s.bySession, c.sessionID)
	}
}

// bind makes c the session's connection, closing any other connection that
// held it (the client moved; the stale one must not linger). A resumed
// session (moved) is announced through the log so that other members drop
// theirs; a session just created has no connection anywhere else, and
// announcing it cost every new session a second log entry.
//
// It runs on the connection's goroutine, which then reads the session
// fields directly; other goroutines (the four-letter words, the
// AdminServer, the quorum watcher) read the identity it publishes. It
// reports false when it closed c instead: a resume that DropClients
// overtook, or any session on a leader with leaderServes=no.
func (s *Server) bind(c *conn, id int64, timeout int32, readOnly, moved bool) bool {
	c.sessionID, c.timeout, c.readOnly = id, timeout, readOnly
	c.ident.Store(&sessionIdent{id: id, timeout: timeout, readOnly: readOnly})
	if readOnly {
		c.stats.heard.Store(time.Now().UnixNano())
	}
	s.mu.Lock()
	if s.cfg.LeaderServesNot && s.backend().Mode() == "leader" {
		// leaderServes=no: the handshake checked the mode when it began,
		// and the member may have become leader since, its one
		// DropClients (watchQuorum) skipping c, still in its handshake.
		// Checked again under mu, which DropClients holds: c binds
		// before that drop, which closes it, or not at all.
		s.mu.Unlock()
		c.logger().Info("refusing a session at bind: this member became leader and leaderServes=no",
			zap.String("session", hexID(id)))
		c.out.kill()
		return false
	}
	old := s.bySession[c.sessionID]
	s.bySession[c.sessionID] = c
	if readOnly {
		s.readOnlyConns[c] = struct{}{}
	}
	// A resume that began before DropClients (which skips connections
	// still in their handshake) may have been checked against what the
	// drop was about, e.g. a tree about to be replaced: it goes too.
	dropped := moved && s.drops.Load() != c.dropsAtConnect
	announce := moved && !readOnly && !dropped
	if announce {
		c.announcing.Store(true) // before sessionMoved can find c
		s.queueAnnounceLocked(c)
	}
	s.mu.Unlock()
	if old != nil && old != c {
		old.out.kill()
	}
	if dropped {
		c.logger().Info("closing a session resumed while client connections were dropped", zap.String("session", hexID(id)))
		c.out.kill()
		return false
	}
	return true
}

// queueAnnounceLocked queues the announcement of c's resume, and starts
// announceLoop unless it runs. It is made in the background: on a
// follower an announcement waits for a leader (up to two election
// timeouts, in the forwarder), and a client resuming during an election
// must not. One goroutine makes them all: a reconnect storm after a
// member died (thousands of resumes on each survivor, during the
// election) would otherwise start a goroutine per resume, each waiting
// for the leader and polling the forwarder, and outliving its
// connection, closed meanwhile for want of a quorum. s.mu must be held.
func (s *Server) queueAnnounceLocked(c *conn) {
	if s.toAnnounce == nil {
		s.toAnnounce = make(map[*conn]backend.Backend)
	}
	s.toAnnounce[c] = s.backend()
	if !s.announcer {
		s.announcer = true
		go s.announceLoop()
	}
}

// announceLoop makes the queued announcements one at a time, until
// there are none. A connection closed before its turn is not announced:
// it left the queue (forget).
func (s *Server) announceLoop() {
	for {
		s.mu.Lock()
		var c *conn
		var be backend.Backend
		for c, be = range s.toAnnounce {
			break
		}
		if c == nil {
			s.toAnnounce = nil // a storm's table is not kept
			s.announcer = false
			s.mu.Unlock()
			return
		}
		delete(s.toAnnounce, c)
		s.mu.Unlock()
		if c.out.isGone() {
			c.announcing.Store(false) // closing: forget follows
			continue
		}
		be.AnnounceSession(c.sessionID, announced{c})
	}
}

// announced is the waiter of a resumed connection's announcement: once it
// is applied here (or will not be), later announcements of the session by
// other members close the connection (sessionMoved).
type announced struct{ c *conn }

// Applied runs on the FSM goroutine, before any later entry's hook.
func (a announced) Applied(*znode.Result, *znode.Tree) { a.c.announcing.Store(false) }

// Failed: the announcement was not made or not committed; the connection
// no longer waits for it.
func (a announced) Failed(error) { a.c.announcing.Store(false) }

// mode is the member's role for srvr and mntr; a member serving read-only
// clients without a quorum says so, as ZooKeeper does.
func (s *Server) mode() string {
	if s.cfg.ReadOnlyMode && !s.backend().HasQuorum() {
		return "read-only"
	}
	return s.backend().Mode()
}

// sessionClosed runs on the FSM goroutine when a session is closed or
// expired: its connection here, if any, is dropped. A client that asked for
// the close gets its reply first (the pending write's completion does that).
func (s *Server) sessionClosed(id int64) {
	s.mu.Lock()
	c := s.bySession[id]
	s.mu.Unlock()
	if c != nil && !c.closing.Load() {
		c.out.kill()
	}
}

// sessionMoved runs on the FSM goroutine when a session's connection moved
// to another member: the stale connection here is closed (rather than left
// to answer SessionMoved forever, cf. ZOOKEEPER-710).
//
// Not a connection whose own announcement is still to be applied here,
// though: the log orders the announcements, the last one names the
// session's member, and this one comes before the connection's own. It is
// the announcement of a move the client made before it came back here
// (applied here only now), and closing its live connection for it is what
// ZooKeeper never does (it fails the old connection's writes). The entry
// says only the session and the member, so the log order is all that
// tells them apart: a move announced before the client came back whose
// entry is committed after the connection's own (held in its member's
// forwarder through an election) still closes the connection.
func (s *Server) sessionMoved(id int64, member int64) {
	if member == s.backend().ID() {
		return
	}
	s.mu.Lock()
	c := s.bySession[id]
	s.mu.Unlock()
	if c == nil {
		return
	}
	if c.announcing.Load() {
		if c.debugOn() {
			c.logger().Debug("kept a connection: a move of its session announced before its own",
				zap.String("session", hexID(id)), zap.Int64("member", member))
		}
		return
	}
	c.out.kill()
}

// Addr is the listening address, once Serve has started.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// SecureAddr is the secure client port's address, once ServeSecure has
// started; nil without one.
func (s *Server) SecureAddr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.secureLn == nil {
		return nil
	}
	return s.secureLn.Addr()
}

// Rejections counts the connections the process refused and its failed
// accepts (Config.Rejected): mntr's zk_connection_rejected.
func (s *Server) Rejections() *netguard.Rejections { return s.cfg.Rejected }

// Close stops accepting, closes every connection and waits for their
// goroutines. Sessions survive (they expire or resume elsewhere).
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		close(s.closed)
		s.mu.Lock()
		for _, ln := range []net.Listener{s.ln, s.secureLn} {
			if ln != nil {
				ln.Close()
			}
		}
		for c := range s.allConnsLocked() {
			c.out.kill()
			c.closeSocket()
		}
		s.mu.Unlock()
		s.thr.wakeAll()
	})
	s.wg.Wait()
	if s.parker != nil {
		s.closeParker.Do(s.parker.stop)
	}
	return nil
}

// newSessionID returns the next candidate session id.
func (s *Server) newSessionID() int64 { return s.nextSession.Add(1) }
