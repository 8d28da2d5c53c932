package server

import (
	"crypto/tls"
	"fmt"
	"net"
	"time"

	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/internal/security/zktls"
)

// memberTransport returns how members listen for and dial each other:
// plain TCP (nil, nil: the ensemble's defaults), or with sslQuorum=true
// mutual TLS from the ssl.quorum.* stores, as ZooKeeper's quorum TLS.
// Every member connection (Raft, appends, forwarded writes) then carries
// the TLS handshake before its stream header.
func memberTransport(st Config) (func(string) (net.Listener, error), ensemble.Dialer, error) {
	if !st.SSLQuorum {
		return nil, nil, nil
	}
	serverCfg, clientCfg, err := zktls.MemberConfigs(st.QuorumTLS, st.QuorumVerifyHost)
	if err != nil {
		return nil, nil, fmt.Errorf("sslQuorum: %w", err)
	}
	listen := func(addr string) (net.Listener, error) {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, err
		}
		return tls.NewListener(ln, serverCfg), nil
	}
	dial := func(addr string, timeout time.Duration) (net.Conn, error) {
		cfg := clientCfg
		if host, _, err := net.SplitHostPort(addr); err == nil && !cfg.InsecureSkipVerify {
			cfg = clientCfg.Clone()
			cfg.ServerName = host
		}
		return tls.DialWithDialer(&net.Dialer{Timeout: timeout}, "tcp", addr, cfg)
	}
	return listen, dial, nil
}
