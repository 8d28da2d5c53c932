package session

import (
	"context"
	"crypto/tls"
	"time"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/internal/security/zktls"
	"github.com/zkraft/zkraft/jute"
)

// handshakeTimeout bounds a TLS client's handshake on the secure port.
const handshakeTimeout = 10 * time.Second

// tlsHandshake completes a secure-port connection's TLS handshake and,
// when the client presented a certificate (verified by the handshake
// against the trust store), adds its x509 identity: the subject's
// distinguished name, and the super user when that name is
// X509SuperUser. A failed handshake is counted as a failed
// authentication, as ZooKeeper counts it.
func (c *conn) tlsHandshake(tc *tls.Conn) bool {
	ctx, cancel := context.WithTimeout(context.Background(), handshakeTimeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		c.srv.stats.authFailed.Add(1)
		c.logger().Info("TLS handshake failed", zap.Error(err))
		return false
	}
	peers := tc.ConnectionState().PeerCertificates
	if len(peers) == 0 {
		return true // ssl.clientAuth=want or none, and no certificate
	}
	dn := zktls.ClientIdentity(peers[0])
	ok := true
	if su := c.srv.cfg.X509SuperUser; su != "" && dn == su {
		ok = c.addID(jute.Id{Scheme: "super", ID: dn})
	}
	if !ok || !c.addID(jute.Id{Scheme: "x509", ID: dn}) {
		c.srv.stats.authFailed.Add(1)
		c.logger().Info("client certificate name over the connection's identity bounds")
		return false
	}
	return true
}
