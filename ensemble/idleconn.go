package ensemble

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"time"
)

// Member-port streams stay open only while they are used. A stream whose
// peer sends nothing for memberIdle is closed by the member that accepted
// it (idleConn), so a silent peer, hostile or hung, cannot hold a
// goroutine, its buffers and a member-port slot for good.
//
// Members keep idle streams of their own in pools, which must never meet
// that close: a request written as the other side closes would fail.
// Each dialing side retires a stream that has been quiet for memberIdle/2
// itself, well before the accepting side's limit:
//   - NetworkTransport's pooled connections (votes, snapshots) refuse a
//     write after that long (retiringConn), and the RPC is sent on a new
//     connection (oncePooled);
//   - the append pool closes a connection that long in the pool
//     (watchIdle);
//   - the forwarding connection sends an empty touch every memberIdle/4
//     that it has sent nothing else (forwarder.writeRequests).
//
// A stream the leader uses is never quiet that long: heartbeats, and
// Raft's commit timer on the pipeline, send every few hundred
// milliseconds. Streams from level-1 members (which do not retire their
// own) are not timed.
const memberIdle = 2 * time.Minute

// idleConn is an accepted member stream whose reads fail once the peer has
// sent nothing for idle: each Read may wait at least 3/4 of idle. The read
// deadline is moved only when a quarter of idle has passed since it was
// last set, not on every read.
type idleConn struct {
	net.Conn
	idle  time.Duration
	armed time.Time // when the deadline was last set (the reader's only)
}

// newIdleConn times c's reads out after idle of silence.
func newIdleConn(c net.Conn, idle time.Duration) *idleConn {
	return &idleConn{Conn: c, idle: idle}
}

// Read implements net.Conn.
func (c *idleConn) Read(p []byte) (int, error) {
	if now := time.Now(); now.Sub(c.armed) > c.idle/4 {
		if err := c.Conn.SetReadDeadline(now.Add(c.idle)); err != nil {
			return 0, fmt.Errorf("ensemble: member stream deadline: %w", err)
		}
		c.armed = now
	}
	return c.Conn.Read(p)
}

// timedOut reports whether err is a read deadline's: on an accepted
// stream, its peer's silence for memberIdle, not the peer leaving.
func timedOut(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

// errRetired is a pooled member stream's, quiet for half of memberIdle:
// this side closed it before the other side's idle limit could.
var errRetired = fmt.Errorf("ensemble: member stream quiet for %v, retired: %w", memberIdle/2, net.ErrClosed)

// retiringConn is a dialed member stream that refuses a write once it has
// carried nothing for after: it is closed and the write fails with
// errRetired (a broken connection to oncePooled), so that no request is
// ever written on a stream its peer is about to time out.
type retiringConn struct {
	net.Conn
	after time.Duration
	last  atomic.Int64 // unix nanoseconds of the last read or write
}

// newRetiringConn wraps c, just dialed.
func newRetiringConn(c net.Conn, after time.Duration) *retiringConn {
	r := &retiringConn{Conn: c, after: after}
	r.last.Store(time.Now().UnixNano())
	return r
}

// Write implements net.Conn.
func (c *retiringConn) Write(p []byte) (int, error) {
	if time.Since(time.Unix(0, c.last.Load())) > c.after {
		c.Conn.Close()
		return 0, errRetired
	}
	n, err := c.Conn.Write(p)
	c.last.Store(time.Now().UnixNano())
	return n, err
}

// Read implements net.Conn.
func (c *retiringConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.last.Store(time.Now().UnixNano())
	}
	return n, err
}
