package session

import "sync/atomic"

// Bounds on the reply bytes a member holds for its clients. A client that
// sends requests but does not read its replies (or reads them slowly) must
// not make the member buffer them without bound: as ZooKeeper's
// NIOServerCnxn stops selecting a throttled connection for reading
// (disableRecv) until it may go on, a connection over these bounds stops
// being read, and TCP then holds the client back.
const (
	// MaxUnsentPerConn is how many queued, unwritten reply bytes one
	// connection may have before its reader pauses; it reads again once
	// the writer has handed the backlog to the socket. Requests already
	// read are still answered in order, so a connection's backlog can pass
	// it by at most one reply (plus writes and parked reads in flight and
	// watch notifications).
	MaxUnsentPerConn = 2 << 20
	// MaxUnsentTotal bounds the unwritten reply bytes of all connections
	// together: past it, every connection whose backlog is at least the
	// average of those with a backlog (the largest ones) pauses its reader
	// as above, while connections with little queued are read on.
	MaxUnsentTotal = 64 << 20
	// maxParkedReads is how many reads of one connection may wait behind
	// its writes in flight before its reader pauses until they are
	// applied: they are answered all at once when the write is applied,
	// so they too would queue replies without bound.
	maxParkedReads = 32
)

// backlog is the unwritten reply bytes of every connection of a Server.
type backlog struct {
	total  atomic.Int64 // bytes queued and not yet written to a socket
	conns  atomic.Int64 // connections with a non-empty backlog
	stalls atomic.Int64 // times a reader paused for its backlog
	reclaimer
}

// overLocked reports whether a connection with unsent bytes queued must
// stop reading: over its own limit, or among the largest backlogs while
// the total is over the global limit.
func (b *backlog) over(unsent int64) bool {
	if unsent > MaxUnsentPerConn {
		return true
	}
	if b == nil || unsent == 0 {
		return false
	}
	total := b.total.Load()
	return total > MaxUnsentTotal && unsent*b.conns.Load() >= total
}
