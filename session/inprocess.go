package session

import (
	"errors"
	"fmt"
	"iter"
	"net"
	"net/netip"
	"syscall"
)

// In-process connections are the clients that reach the server without a
// listener: the web console's sessions (cmd/zkraft hands the console
// DialInProcess). They are served as any connection (handshake, ACLs,
// throttles, backpressure, Close, DropClients, cons) with two differences:
//
//   - they are not counted against maxClientCnxns, maxCnxns or the
//     file-limit cap (Config.ConnLimit: they hold no descriptor). Those
//     bound what the client port's users can take; counting the console's
//     sessions there let console logins, all from the console's one
//     address, fill 127.0.0.1's slots and turn the member's local clients
//     away (issue #37). Whoever serves in-process connections bounds them
//     itself: the console by its login caps.
//   - their ip identity, and the address the audit log records, is the
//     one ServeConn is given (the console passes the browser's), not the
//     address of the connection (which has none).
//
// DialInProcess joins the two ends with a net.Pipe, not a socket pair: a
// pipe holds no file descriptor, and the process's descriptors are
// divided between its listeners and what the member needs for its files
// and peers (netguard.Plan), which console sessions must not eat into. A
// pipe cannot be parked (the parker watches fds), so an idle in-process
// connection keeps its reader goroutine and read buffer: a few KiB for
// each of the console's few hundred sessions at most.
//
// They live in Server.inproc, beside Server.conns (which admit counts),
// under Server.mu; every loop over all connections walks both
// (allConnsLocked).

// ErrServerClosed is returned by ServeConn and DialInProcess once the
// server is closed.
var ErrServerClosed = errors.New("session: server closed")

// DialInProcess returns the client end of a new in-process connection (a
// net.Pipe, holding no file descriptor), whose server end is served as
// coming from remoteIP (ServeConn). A go-zookeeper client dials it through
// zk.WithDialer.
func (s *Server) DialInProcess(remoteIP string) (net.Conn, error) {
	srvEnd, cliEnd := net.Pipe()
	if err := s.ServeConn(srvEnd, remoteIP); err != nil {
		srvEnd.Close()
		cliEnd.Close()
		return nil, err
	}
	return cliEnd, nil
}

// ServeConn serves nc, a client connection that came through no listener,
// as from remoteIP: that address is its ip identity and the audit log's
// client address. It is not counted against maxClientCnxns, maxCnxns or
// Config.ConnLimit (the caller bounds such connections). It returns once
// the connection is registered; the connection is served in goroutines of
// its own until the client closes it or the server does. It returns
// ErrServerClosed after Close.
func (s *Server) ServeConn(nc net.Conn, remoteIP string) error {
	c := newConn(s, asFrom(nc, remoteIP))
	s.mu.Lock()
	select {
	case <-s.closed:
		s.mu.Unlock()
		return ErrServerClosed
	default:
	}
	if s.inproc == nil {
		s.inproc = make(map[*conn]struct{})
	}
	s.inproc[c] = struct{}{}
	s.wg.Add(1) // done by c.finishServe; before Close can Wait, since Close kills under mu
	s.mu.Unlock()
	go c.serve()
	return nil
}

// forgetInProcessLocked drops c from the tables if it is an in-process
// connection, reporting whether it was (forget's hook; s.mu is held).
func (s *Server) forgetInProcessLocked(c *conn) bool {
	if _, ok := s.inproc[c]; !ok {
		return false
	}
	delete(s.inproc, c)
	if s.bySession[c.sessionID] == c {
		delete(s.bySession, c.sessionID)
	}
	return true
}

// allConnsLocked yields every connection: those accepted on a listener,
// then the in-process ones. s.mu must be held.
func (s *Server) allConnsLocked() iter.Seq[*conn] {
	return func(yield func(*conn) bool) {
		for c := range s.conns {
			if !yield(c) {
				return
			}
		}
		for c := range s.inproc {
			if !yield(c) {
				return
			}
		}
	}
}

// asFrom wraps nc so that its RemoteAddr is remoteIP (newConn takes the
// connection's ip identity from it), keeping syscall.Conn when nc has one
// (a socket given to ServeConn): the reader then waits on the raw socket
// and the parker may hold its fd.
func asFrom(nc net.Conn, remoteIP string) net.Conn {
	fc := &fromConn{Conn: nc, remote: addrOf(remoteIP)}
	if sc, ok := nc.(syscall.Conn); ok {
		return &fromSyscallConn{fromConn: fc, sc: sc}
	}
	return fc
}

// fromConn is an in-process connection with the address it acts for.
type fromConn struct {
	net.Conn
	remote net.Addr
}

// RemoteAddr implements net.Conn: the address given to ServeConn.
func (c *fromConn) RemoteAddr() net.Addr { return c.remote }

// fromSyscallConn is a fromConn over a socket.
type fromSyscallConn struct {
	*fromConn
	sc syscall.Conn
}

// SyscallConn implements syscall.Conn: the socket's.
func (c *fromSyscallConn) SyscallConn() (syscall.RawConn, error) {
	rc, err := c.sc.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("in-process connection: %w", err)
	}
	return rc, nil
}

// addrOf is remoteIP as an address: a *net.TCPAddr without a port when it
// parses as an IP (remoteIP then prints it as ZooKeeper prints a client's
// address), else a name that prints as given.
func addrOf(remoteIP string) net.Addr {
	if a, err := netip.ParseAddr(remoteIP); err == nil {
		return net.TCPAddrFromAddrPort(netip.AddrPortFrom(a, 0))
	}
	return namedAddr(remoteIP)
}

// namedAddr is an address that is not an IP (a Unix socket's peer, say).
type namedAddr string

// Network implements net.Addr.
func (a namedAddr) Network() string { return "inprocess" }

// String implements net.Addr.
func (a namedAddr) String() string { return string(a) }
