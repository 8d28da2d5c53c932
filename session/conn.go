package session

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/watches"
	"github.com/zkraft/zkraft/znode"
)

// conn is one client connection. After the handshake it is bound to a
// session; it is the watches.Watcher for every watch it registers.
type conn struct {
	srv *Server
	nc  net.Conn
	out *outbound
	// dropsAtConnect is srv.drops when the ConnectRequest was read.
	dropsAtConnect uint64
	// unified is the TLS configuration of a client port serving plaintext
	// and TLS alike (ServeUnified): serve sniffs which this client speaks.
	unified *tls.Config
	remote  string // client IP

	// The session, for the connection's own goroutines; other goroutines
	// read ident, which bind publishes.
	sessionID int64
	timeout   int32 // negotiated, ms
	readOnly  bool  // a read-only session on a member without quorum
	ident     atomic.Pointer[sessionIdent]
	saslState saslMech // the SASL exchange in progress or done (reader goroutine only)
	ids       atomic.Pointer[[]jute.Id]
	idsKey    atomic.Uint64 // znode.IdentityKey of ids
	idsLogged uint64        // the key last proposed with OpSetIdentities (reader goroutine)
	closing   atomic.Bool   // the client asked to close its session
	stale     atomic.Bool   // torn down: no new watches may be registered
	// announcing is set while the announcement of this connection's
	// resume (bind) is not applied here yet (sessionMoved).
	announcing atomic.Bool

	// mu guards pending: this connection's proposed, not yet applied writes,
	// oldest first. Reads arriving while it is non-empty park on the last.
	// parked counts them, changed under mu and read without it.
	mu      sync.Mutex
	pending []*pendingWrite
	parked  atomic.Int32

	stats connStats

	// fr is the reader's buffered input; parkedFD the socket's fd while
	// the connection is parked without a reader goroutine, -1 otherwise;
	// watchedFD the socket's fd once it is in the parker's epoll set,
	// armed (parked) or not, -1 before (both guarded by the parker's mu).
	fr        *frameReader
	parkedFD  int32
	watchedFD int32
}

var _ watches.StaleWatcher = (*conn)(nil)

// sessionIdent is a connection's session as the four-letter words, the
// AdminServer and the quorum watcher see it, from their own goroutines.
type sessionIdent struct {
	id       int64
	timeout  int32 // ms
	readOnly bool
}

// session is the connection's session as published by bind; zero before
// the handshake.
func (c *conn) session() sessionIdent {
	if p := c.ident.Load(); p != nil {
		return *p
	}
	return sessionIdent{}
}

// Stale implements watches.StaleWatcher.
func (c *conn) Stale() bool { return c.stale.Load() }

func newConn(srv *Server, nc net.Conn) *conn {
	c := &conn{srv: srv, nc: nc, out: newOutbound(&srv.backlog), parkedFD: -1, watchedFD: -1}
	if srv.parker != nil {
		c.out.beforeClose = c.unpark
	}
	c.stats.established = time.Now()
	c.stats.lat.Reset()
	c.remote = remoteIP(nc.RemoteAddr())
	ids := []jute.Id{{Scheme: "ip", ID: c.remote}}
	c.ids.Store(&ids)
	c.idsKey.Store(znode.IdentityKey(ids))
	return c
}

// logger is the server's logger with the client's address. It is built
// when something is logged (rarely), not kept: a logger with fields costs
// about 1.5 KiB, and a server holds thousands of connections.
func (c *conn) logger() *zap.Logger {
	return c.srv.log.With(zap.Stringer("remote", c.nc.RemoteAddr()))
}

// debugOn reports whether debug logging is on. Debug messages on paths
// every connection takes are guarded by it, so that logger's allocations
// are not paid for a message that is then dropped.
func (c *conn) debugOn() bool { return c.srv.log.Core().Enabled(zap.DebugLevel) }

func remoteIP(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// Ids implements watches.Watcher: the connection's identities.
func (c *conn) Ids() []jute.Id { return *c.ids.Load() }

// SessionID identifies the session for operator listings (wchc, wchp).
func (c *conn) SessionID() int64 { return c.sessionID }

// Notify implements watches.Watcher: a notification frame joins the
// outbound buffer in order. It never blocks.
func (c *conn) Notify(path string, typ jute.EventType, zxid int64) {
	ev := jute.WatcherEvent{Type: typ, State: jute.StateSyncConnected, Path: path}
	c.out.reply(jute.XidNotification, zxid, jute.OK, &ev)
	c.countSent()
}

// addID appends an identity (after a successful auth). Only the reader
// goroutine calls it; readers of Ids see either the old or the new slice.
// It reports false, changing nothing, when the connection would hold more
// identities than znode.CheckIdentities allows (the caller fails the
// authentication).
func (c *conn) addID(id jute.Id) bool {
	old := *c.ids.Load()
	for _, x := range old {
		if x == id {
			return true
		}
	}
	ids := make([]jute.Id, len(old), len(old)+1)
	copy(ids, old)
	ids = append(ids, id)
	if znode.CheckIdentities(ids) != nil {
		return false
	}
	c.ids.Store(&ids)
	c.idsKey.Store(znode.IdentityKey(ids))
	return true
}

// Per-connection buffer sizes. A server holds thousands of mostly idle
// connections, so each keeps small buffers: requests are tens of bytes (a
// pipelined burst of them fits in readBufferSize; a larger frame is read
// straight into its own buffer), and a buffer grown by one large request
// or reply is dropped once it has been used instead of being kept for the
// connection's lifetime.
const (
	readBufferSize   = 4 << 10
	retainBufferSize = 64 << 10
	// idleFrameBufferSize is the largest frame buffer an idle connection
	// keeps (ordinary requests fit, so a request after a pause allocates
	// nothing).
	idleFrameBufferSize = 512
)

// serve runs the connection: the reader here (and, after the connection
// was parked, in the goroutines resume starts), the writer in goroutines
// of its own. The connection is finished (finishServe) when the last
// reader returns.
func (c *conn) serve() {
	stream, err := c.nc, error(nil)
	if c.unified != nil {
		stream, err = sniff(c.nc, c.unified)
		if err != nil {
			stream = c.nc
		}
	}
	c.out.start(stream, c.srv.closed, c.srv.cfg.WriteTimeout)
	c.fr = newFrameReader(stream)
	if err != nil {
		if c.debugOn() {
			c.logger().Debug("closing connection", zap.Error(err))
		}
		c.finishServe()
		return
	}
	if tc, ok := stream.(*tls.Conn); ok && !c.tlsHandshake(tc) {
		c.finishServe()
		return
	}
	// A connection that never says what it is would hold its goroutine
	// and buffers (and a slot of maxClientCnxns) for good.
	_ = stream.SetReadDeadline(time.Now().Add(c.srv.cfg.FirstFrameTimeout))
	if !c.handshake(c.fr.reader()) {
		c.finishServe()
		return
	}
	_ = stream.SetReadDeadline(time.Time{})
	c.resume()
}

// resume runs the read loop, and finishes the connection unless it was
// parked.
func (c *conn) resume() {
	c.fr.take() // the socket is readable (or closed)
	if c.fr.raw != nil {
		c.out.readerBusy()
	}
	if c.readLoop(c.fr) {
		c.finishServe()
	}
}

// finishServe ends the connection once its reader is done.
func (c *conn) finishServe() {
	c.fr.release()
	c.teardown()
	c.srv.wg.Done()
}

// readLoop reads and dispatches requests until the connection ends
// (true) or is parked, idle, without a goroutine (false).
func (c *conn) readLoop(fr *frameReader) bool {
	var buf []byte
	r := jute.NewReader(nil)
	for {
		if !fr.busy() {
			if cap(buf) > idleFrameBufferSize {
				buf = nil // nor a large frame buffer while idle
			}
			c.out.readerIdle()
			if c.park(fr) {
				return false
			}
			c.out.readerBusy()
		}
		frame, err := jute.ReadFrame(fr.take(), buf, c.srv.cfg.MaxBuffer)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && c.debugOn() {
				c.logger().Debug("closing connection", zap.Error(err))
			}
			return true
		}
		buf = frame[:0]
		if cap(buf) > retainBufferSize {
			buf = nil // a large request's buffer goes after this one
		}
		if c.out.isGone() {
			// The connection is going away (its client closed it, or it
			// was cut off): the requests still buffered would only
			// cost the member work nobody will collect.
			return true
		}
		c.srv.stats.packetsReceived.Add(1)
		c.stats.received.Add(1)
		c.srv.backend().TouchSession(c.sessionID)
		if c.readOnly {
			c.stats.heard.Store(time.Now().UnixNano())
		}
		r.Reset(frame)
		var h jute.RequestHeader
		if h.Decode(r) != nil {
			return true
		}
		c.requested(h)
		// A read is answered on this goroutine; its reply is written
		// here too unless more requests are already buffered (endHold).
		inline := kindOf(h.Type) == kindRead
		if inline {
			c.out.hold()
		}
		ok := c.dispatch(h, frame[8:])
		if inline {
			c.out.endHold(fr.buffered())
		}
		if !ok {
			return true
		}
		c.holdReads()
		c.holdForBacklog()
	}
}

// teardown releases everything the connection holds: the writer flushes
// what is queued and closes the socket. The session itself lives on until
// it expires or is closed.
func (c *conn) teardown() {
	c.out.closeAfterFlush()
	c.srv.forget(c)
	c.stale.Store(true)
	c.srv.backend().Watches().RemoveWatcher(c)
}

// closeSocket closes the connection's socket at once, as a lost
// connection does, ending its reader and a writer blocked on the client.
// A TLS connection's socket is closed under TLS, without the close_notify
// alert tls.Conn.Close sends first: that write waits, up to 5 s, for a
// client that has stopped reading, and closeSocket's callers must not
// wait on any client (a write's waiter is failed under the ensemble
// forwarder's lock, under the observer learner's lock or on the FSM
// goroutine; Server.Close holds the server's lock). The writer's own close
// of the stream then fails at once.
func (c *conn) closeSocket() {
	if tc, ok := c.nc.(*tls.Conn); ok {
		_ = tc.NetConn().Close()
		return
	}
	_ = c.nc.Close()
}

// countSent counts one packet sent to this client.
func (c *conn) countSent() {
	c.srv.stats.packetsSent.Add(1)
	c.stats.sent.Add(1)
}
