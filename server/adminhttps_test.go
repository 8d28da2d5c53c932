package server

import (
	"crypto/tls"
	"crypto/x509/pkix"
	"errors"
	"testing"

	"github.com/zkraft/zkraft/internal/security/zktls/zktlstest"
)

// TestAdminTLSConfig: admin.forceHttps serves the AdminServer with the
// client port's key store, asking browsers for a certificate only with
// admin.needClientAuth.
func TestAdminTLSConfig(t *testing.T) {
	st := DefaultConfig()
	if cfg, err := adminTLSConfig(st); cfg != nil || err != nil {
		t.Fatalf("plain AdminServer: %v %v", cfg, err)
	}
	st.AdminHTTPS = true
	if _, err := adminTLSConfig(st); !errors.Is(err, errAdminNoKeyStore) {
		t.Fatalf("no key store: %v", err)
	}
	ks, _, err := zktlstest.PEMStores(t.TempDir(), pkix.Name{CommonName: "zkraft"})
	if err != nil {
		t.Fatal(err)
	}
	st.TLS.KeyStore = ks
	st.TLS.ClientAuth = "need" // the client port's; not the AdminServer's
	cfg, err := adminTLSConfig(st)
	if err != nil || cfg.ClientAuth != tls.NoClientCert || len(cfg.Certificates) != 1 {
		t.Fatalf("client key store: %v %v", cfg, err)
	}
	st.AdminNeedClientAuth = true
	if cfg, err := adminTLSConfig(st); err != nil || cfg.ClientAuth != tls.RequireAndVerifyClientCert {
		t.Fatalf("admin.needClientAuth: %v %v", cfg, err)
	}
	if _, logs := mustApply(t, "dataDir=/d\nadmin.forceHttps=true\nadmin.needClientAuth=true\n"); logs.Len() != 0 {
		t.Fatalf("warnings: %v", logs.All())
	}
}
