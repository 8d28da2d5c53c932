package session

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"time"
)

// tlsHandshakeRecord is the first byte of a TLS client's first record (a
// handshake record holding its ClientHello). A plaintext client's first
// byte is the high byte of a frame length (0 for any frame ZooKeeper
// accepts) or the first letter of a four-letter word, never this.
const tlsHandshakeRecord = 0x16

// ServeUnified accepts plaintext and TLS clients on the same listener until
// Close, as ZooKeeper's client port does with client.portUnification: a
// connection whose first byte opens a TLS handshake record is served as
// on ServeSecure (cfg, x509 identities), any other as on Serve. It returns
// nil after Close.
func (s *Server) ServeUnified(ln net.Listener, cfg *tls.Config) error {
	gl := s.guard(ln, "client")
	s.mu.Lock()
	s.ln = gl
	s.mu.Unlock()
	return s.accept(gl, acceptMode{tls: cfg, unified: true, name: "client"})
}

// acceptMode is how a listener's connections speak: plaintext (tls nil),
// TLS, or either as each client chooses (unified); name is the
// listener's in logs and in the rejection counts.
type acceptMode struct {
	tls     *tls.Config
	unified bool
	name    string
}

// wrap returns the stream a new connection is served over: TLS from the
// first byte, or raw until sniff decides.
func (m acceptMode) wrap(nc net.Conn) net.Conn {
	if m.tls != nil && !m.unified {
		return tls.Server(nc, m.tls)
	}
	return nc
}

// sniff reads a unified port's first byte (within handshakeTimeout) and
// returns the stream to serve: TLS over nc when that byte opens a
// handshake record, nc itself otherwise, either replaying the byte.
func sniff(nc net.Conn, cfg *tls.Config) (net.Conn, error) {
	var first [1]byte
	_ = nc.SetReadDeadline(time.Now().Add(handshakeTimeout))
	if _, err := io.ReadFull(nc, first[:]); err != nil {
		return nil, fmt.Errorf("read first byte: %w", err)
	}
	_ = nc.SetReadDeadline(time.Time{})
	pc := &prefixedConn{Conn: nc, first: first[0], pending: true}
	if first[0] == tlsHandshakeRecord {
		return tls.Server(pc, cfg), nil
	}
	return pc, nil
}

// prefixedConn is a connection whose first byte was already read: Read
// returns it before reading on.
type prefixedConn struct {
	net.Conn
	first   byte
	pending bool
}

// Read implements net.Conn. The replayed byte comes back alone: a short
// read is allowed, and waiting for more could block on a client that has
// sent nothing else yet.
func (p *prefixedConn) Read(b []byte) (int, error) {
	if !p.pending || len(b) == 0 {
		return p.Conn.Read(b)
	}
	p.pending = false
	b[0] = p.first
	return 1, nil
}
