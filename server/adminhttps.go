package server

import (
	"crypto/tls"
	"errors"
	"fmt"

	"github.com/zkraft/zkraft/internal/security/zktls"
)

// adminHTTPSKey applies admin.forceHttps and admin.needClientAuth, the
// zoo.cfg keys of ZooKeeper's HTTPS AdminServer; false if k is neither.
func (s *Config) adminHTTPSKey(k, v string) (bool, error) {
	var err error
	switch k {
	case "admin.forceHttps":
		s.AdminHTTPS, err = parseBoolKey(v)
	case "admin.needClientAuth":
		s.AdminNeedClientAuth, err = parseBoolKey(v)
	default:
		return false, nil
	}
	return true, err
}

// errAdminNoKeyStore is an HTTPS AdminServer without a key store.
var errAdminNoKeyStore = errors.New("admin.forceHttps needs ssl.quorum.keyStore.location (or --tls-keystore)")

// adminTLSConfig is the AdminServer's TLS configuration, nil when it
// serves plain HTTP. As ZooKeeper's JettyAdminServer, it takes the
// ssl.quorum.* stores (here, when those are unset, the client port's
// ssl.* ones, so --admin-https works with --tls-keystore alone); a client
// certificate is asked for only with admin.needClientAuth.
func adminTLSConfig(st Config) (*tls.Config, error) {
	if !st.AdminHTTPS {
		return nil, nil
	}
	opts := st.QuorumTLS
	if opts.KeyStore == "" {
		opts = st.TLS
	}
	if opts.KeyStore == "" {
		return nil, errAdminNoKeyStore
	}
	opts.ClientAuth = "none"
	if st.AdminNeedClientAuth {
		opts.ClientAuth = "need"
	}
	cfg, err := zktls.ServerConfig(opts)
	if err != nil {
		return nil, fmt.Errorf("AdminServer HTTPS: %w", err)
	}
	return cfg, nil
}
