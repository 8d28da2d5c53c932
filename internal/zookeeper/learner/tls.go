package learner

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"

	"go.uber.org/zap"
)

// errTLS: a server's quorum port took the connection but the TLS
// handshake failed: its certificate is not trusted, it refused ours, or
// it does not speak TLS (sslQuorum differs). Unlike errNotLeader (a
// closed port: every server but the leader), this is a configuration
// error the operator must see.
var errTLS = errors.New("learner: quorum TLS handshake failed")

// tlsClient runs the client side of the TLS handshake on nc, bounded by
// DialTimeout, and returns the TLS connection.
func (l *Learner) tlsClient(ctx context.Context, nc net.Conn, addr string) (net.Conn, error) {
	cfg := l.cfg.TLS
	if cfg.ServerName == "" && !cfg.InsecureSkipVerify {
		if host, _, err := net.SplitHostPort(addr); err == nil {
			cfg = cfg.Clone()
			cfg.ServerName = host
		}
	}
	tc := tls.Client(nc, cfg)
	hctx, cancel := context.WithTimeout(ctx, l.cfg.DialTimeout)
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		return nil, fmt.Errorf("%w with %s: %w", errTLS, addr, err)
	}
	return tc, nil
}

// tlsRefused tells whether err, from a read just after the handshake,
// is the server's TLS alert: under TLS 1.3 the client's handshake ends
// before the server checks the client's certificate, so a refused
// certificate shows as the first read's error.
func tlsRefused(err error) bool {
	// crypto/tls reports a received alert as a net.OpError "remote
	// error" wrapping its unexported alert type.
	var op *net.OpError
	var alert tls.AlertError
	return errors.As(err, &op) && op.Op == "remote error" || errors.As(err, &alert)
}

// logTLS logs a TLS failure with addr: a warning the first time and
// when it changes, at debug level when it repeats (Run retries every
// Retry).
func (l *Learner) logTLS(addr string, err error) {
	l.logOnce(addr, err, "learner: cannot follow: the quorum TLS handshake failed (check ssl.quorum.* and the server's sslQuorum)",
		"learner: quorum TLS handshake failed")
}

// logOnce logs a configuration error connecting to addr: warn the first
// time and when the error changes, debug when it repeats.
func (l *Learner) logOnce(addr string, err error, warn, debug string) {
	if l.failLogged == nil {
		l.failLogged = map[string]string{}
	}
	if msg := err.Error(); l.failLogged[addr] != msg {
		l.failLogged[addr] = msg
		l.log.Warn(warn, zap.String("server", addr), zap.Error(err))
		return
	}
	l.log.Debug(debug, zap.String("server", addr), zap.Error(err))
}
