package ensemble

import (
	"net"
	"sync"
	"time"
)

// A member that stops must not wait for the calls its Raft has under way
// to members that do not answer (stopped by SIGSTOP, cut off by a
// partition): Raft's shutdown waits for its replication and election
// goroutines, and a heartbeat or vote request to such a member waits for
// its connection's timeout, 10 s (a handshake with a stopped member too).
// So every member connection this member dials is kept in a dialedConns
// (its mux dials through dialedConns.dialer), and Close breaks them all
// once it has told Raft to stop: the calls fail at once, and a stop takes
// milliseconds, as ZooKeeper's.

// dialedConns is a set of outgoing connections that can be closed at
// once. The zero value is empty and open.
type dialedConns struct {
	mu     sync.Mutex
	conns  map[*dialedConn]struct{}
	closed bool
}

// track adds c to the set; c leaves it when closed. After closeAll, c
// is closed at once and net.ErrClosed returned.
func (s *dialedConns) track(c net.Conn) (net.Conn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		c.Close()
		return nil, net.ErrClosed
	}
	if s.conns == nil {
		s.conns = make(map[*dialedConn]struct{})
	}
	d := &dialedConn{Conn: c, set: s}
	s.conns[d] = struct{}{}
	return d, nil
}

// closeAll closes every connection in the set and every one tracked
// after.
func (s *dialedConns) closeAll() {
	s.mu.Lock()
	conns := s.conns
	s.conns, s.closed = nil, true
	s.mu.Unlock()
	for c := range conns {
		c.Conn.Close()
	}
}

// dialedConn is a connection in a dialedConns.
type dialedConn struct {
	net.Conn
	set  *dialedConns
	once sync.Once
}

// Close implements net.Conn.
func (c *dialedConn) Close() error {
	c.once.Do(func() {
		c.set.mu.Lock()
		delete(c.set.conns, c)
		c.set.mu.Unlock()
	})
	return c.Conn.Close()
}

// dialer wraps dial so that every connection it opens is kept in s,
// from before its handshake on.
func (s *dialedConns) dialer(dial Dialer) Dialer {
	return func(addr string, timeout time.Duration) (net.Conn, error) {
		c, err := dial(addr, timeout)
		if err != nil {
			return nil, err
		}
		return s.track(c)
	}
}
