package zktls

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	keystore "github.com/pavlo-v-chernykh/keystore-go/v4"

	"github.com/zkraft/zkraft/internal/security/zktls/zktlstest"
	"software.sslmate.com/src/go-pkcs12"
)

// issued is a key and its certificate.
type issued = zktlstest.Issued

func issue(t *testing.T, subject pkix.Name, ca *issued, isCA bool) issued {
	t.Helper()
	is, err := zktlstest.Issue(subject, ca, isCA)
	if err != nil {
		t.Fatal(err)
	}
	return is
}

func pemFile(t *testing.T, path string, key *ecdsa.PrivateKey, certs ...*x509.Certificate) {
	t.Helper()
	if err := zktlstest.WritePEM(path, key, certs...); err != nil {
		t.Fatal(err)
	}
}

// stores writes the server's key store and a trust store holding ca in
// format typ ("PEM", "PKCS12", "JKS") and returns their paths.
func stores(t *testing.T, dir, typ string, server, ca issued, password string) (string, string) {
	t.Helper()
	ext := map[string]string{"PEM": ".pem", "PKCS12": ".p12", "JKS": ".jks"}[typ]
	ks, ts := filepath.Join(dir, "server"+ext), filepath.Join(dir, "trust"+ext)
	switch typ {
	case "PEM":
		pemFile(t, ks, server.Key, server.Cert, ca.Cert)
		pemFile(t, ts, nil, ca.Cert)
	case "PKCS12":
		data, err := pkcs12.Modern.Encode(server.Key, server.Cert, []*x509.Certificate{ca.Cert}, password)
		if err != nil {
			t.Fatal(err)
		}
		trust, err := pkcs12.Modern.EncodeTrustStore([]*x509.Certificate{ca.Cert}, password)
		if err != nil {
			t.Fatal(err)
		}
		_ = os.WriteFile(ks, data, 0o600)
		_ = os.WriteFile(ts, trust, 0o600)
	case "JKS":
		der, err := x509.MarshalPKCS8PrivateKey(server.Key)
		if err != nil {
			t.Fatal(err)
		}
		k := keystore.New()
		if err := k.SetPrivateKeyEntry("server", keystore.PrivateKeyEntry{
			CreationTime: time.Now(), PrivateKey: der,
			CertificateChain: []keystore.Certificate{{Type: "X509", Content: server.Cert.Raw}, {Type: "X509", Content: ca.Cert.Raw}},
		}, []byte(password)); err != nil {
			t.Fatal(err)
		}
		tr := keystore.New()
		if err := tr.SetTrustedCertificateEntry("ca", keystore.TrustedCertificateEntry{
			CreationTime: time.Now(), Certificate: keystore.Certificate{Type: "X509", Content: ca.Cert.Raw},
		}); err != nil {
			t.Fatal(err)
		}
		for path, store := range map[string]keystore.KeyStore{ks: k, ts: tr} {
			var b bytes.Buffer
			if err := store.Store(&b, []byte(password)); err != nil {
				t.Fatal(err)
			}
			_ = os.WriteFile(path, b.Bytes(), 0o600)
		}
	}
	return ks, ts
}

// handshake runs one TLS handshake between cfg and a client offering
// clientCert (none when nil) and trusting ca; it returns the server's view
// of the client's certificate chain, or the error either side saw.
func handshake(t *testing.T, cfg *tls.Config, ca *x509.Certificate, clientCert *issued, version uint16) ([]*x509.Certificate, error) {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type result struct {
		peers []*x509.Certificate
		err   error
	}
	done := make(chan result, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- result{err: err}
			return
		}
		defer c.Close()
		tc := c.(*tls.Conn)
		err = tc.Handshake()
		if err == nil {
			// A TLS 1.3 server learns of a rejected client certificate
			// only when it reads; the client then sees the alert.
			_, err = tc.Write([]byte("x"))
		}
		done <- result{tc.ConnectionState().PeerCertificates, err}
	}()
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	ccfg := &tls.Config{RootCAs: roots, ServerName: "127.0.0.1", MinVersion: version, MaxVersion: version}
	if clientCert != nil {
		ccfg.Certificates = []tls.Certificate{{Certificate: [][]byte{clientCert.Cert.Raw}, PrivateKey: clientCert.Key}}
	}
	c, err := tls.Dial("tcp", ln.Addr().String(), ccfg)
	if err == nil {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		var n int
		n, err = c.Read(make([]byte, 1))
		if n == 1 {
			err = nil // the byte can arrive with the server's close_notify
		}
		c.Close()
	}
	r := <-done
	if err == nil {
		err = r.err
	}
	return r.peers, err
}

// TestStoresAndClientAuth loads each store format and checks the client
// certificate policy end to end: need (ZooKeeper's default) refuses a
// client without a certificate or with one from another authority; want
// admits one without; the server's chain is what the store holds.
func TestStoresAndClientAuth(t *testing.T) {
	ca := issue(t, pkix.Name{CommonName: "test CA"}, nil, true)
	server := issue(t, pkix.Name{CommonName: "server"}, &ca, false)
	client := issue(t, pkix.Name{CommonName: "client", OrganizationalUnit: []string{"ops"}, Organization: []string{"example"}}, &ca, false)
	rogueCA := issue(t, pkix.Name{CommonName: "rogue"}, nil, true)
	rogue := issue(t, pkix.Name{CommonName: "client"}, &rogueCA, false)
	for _, typ := range []string{"PEM", "PKCS12", "JKS"} {
		t.Run(typ, func(t *testing.T) {
			ks, ts := stores(t, t.TempDir(), typ, server, ca, "secret123")
			cfg, err := ServerConfig(Options{KeyStore: ks, KeyStorePassword: "secret123", TrustStore: ts, TrustStorePassword: "secret123"})
			if err != nil {
				t.Fatal(err)
			}
			if n := len(cfg.Certificates[0].Certificate); n != 2 {
				t.Fatalf("server chain has %d certificates, want 2", n)
			}
			for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
				peers, err := handshake(t, cfg, ca.Cert, &client, v)
				if err != nil || len(peers) == 0 || ClientIdentity(peers[0]) != "CN=client,OU=ops,O=example" {
					t.Fatalf("version %x: client with a certificate: %v %v", v, err, peers)
				}
				if _, err := handshake(t, cfg, ca.Cert, nil, v); err == nil {
					t.Fatalf("version %x: need admitted a client without a certificate", v)
				}
				if _, err := handshake(t, cfg, ca.Cert, &rogue, v); err == nil {
					t.Fatalf("version %x: need admitted a certificate from another authority", v)
				}
			}
			want, err := ServerConfig(Options{KeyStore: ks, KeyStorePassword: "secret123", TrustStore: ts,
				TrustStorePassword: "secret123", ClientAuth: "want"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := handshake(t, want, ca.Cert, nil, tls.VersionTLS12); err != nil {
				t.Fatalf("want refused a client without a certificate: %v", err)
			}
			if typ != "PEM" {
				if _, err := ServerConfig(Options{KeyStore: ks, KeyStorePassword: "wrong"}); err == nil {
					t.Fatal("a wrong key store password was accepted")
				}
			}
		})
	}
}

func TestOptionErrors(t *testing.T) {
	dir := t.TempDir()
	ca := issue(t, pkix.Name{CommonName: "ca"}, nil, true)
	ks, _ := stores(t, dir, "PEM", ca, ca, "")
	for name, o := range map[string]Options{
		"no key store":     {},
		"unknown ext":      {KeyStore: filepath.Join(dir, "server.key")},
		"unknown type":     {KeyStore: ks, KeyStoreType: "BCFKS"},
		"missing file":     {KeyStore: filepath.Join(dir, "nope.pem")},
		"bad clientAuth":   {KeyStore: ks, ClientAuth: "always"},
		"bad protocol":     {KeyStore: ks, Protocol: "TLSv1.1"},
		"bad cipher suite": {KeyStore: ks, CipherSuites: []string{"TLS_NOT_A_SUITE"}},
	} {
		if _, err := ServerConfig(o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	cfg, err := ServerConfig(Options{KeyStore: ks, Protocol: "TLSv1.3", ClientAuth: "none",
		CipherSuites: []string{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"}})
	if err != nil || cfg.MinVersion != tls.VersionTLS13 || cfg.MaxVersion != tls.VersionTLS13 || cfg.ClientAuth != tls.NoClientCert ||
		len(cfg.CipherSuites) != 1 {
		t.Fatalf("%+v %v", cfg, err)
	}
	if cfg, _ := ServerConfig(Options{KeyStore: ks}); cfg.MinVersion != tls.VersionTLS12 || cfg.MaxVersion != 0 {
		t.Fatalf("default versions %x-%x, want TLS 1.2 and up", cfg.MinVersion, cfg.MaxVersion)
	}
	if _, err := ServerConfig(Options{KeyStore: ks, KeyStoreType: "pem", EnabledProtocols: []string{"TLSv1.2", " TLSv1.3"}}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "enc.pem"), []byte("-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ServerConfig(Options{KeyStore: filepath.Join(dir, "enc.pem")}); err == nil || !strings.Contains(err.Error(), "encrypted") {
		t.Fatalf("encrypted PEM key: %v", err)
	}
}

// TestMemberConfigs: both ends authenticate; without host name checks the
// chain is still verified.
func TestMemberConfigs(t *testing.T) {
	dir := t.TempDir()
	ks, ts, err := zktlstest.PEMStores(dir, pkix.Name{CommonName: "member"})
	if err != nil {
		t.Fatal(err)
	}
	otherKS, _, err := zktlstest.PEMStores(t.TempDir(), pkix.Name{CommonName: "intruder"})
	if err != nil {
		t.Fatal(err)
	}
	pair := func(verifyHost bool, clientKS string, serverName string) error {
		srv, _, err := MemberConfigs(Options{KeyStore: ks, TrustStore: ts}, verifyHost)
		if err != nil {
			return err
		}
		_, cli, err := MemberConfigs(Options{KeyStore: clientKS, TrustStore: ts}, verifyHost)
		if err != nil {
			return err
		}
		cli = cli.Clone()
		cli.ServerName = serverName
		ln, err := tls.Listen("tcp", "127.0.0.1:0", srv)
		if err != nil {
			return err
		}
		defer ln.Close()
		go func() {
			c, err := ln.Accept()
			if err == nil {
				_ = c.(*tls.Conn).Handshake()
				_, _ = c.Write([]byte("x"))
				c.Close()
			}
		}()
		c, err := tls.Dial("tcp", ln.Addr().String(), cli)
		if err != nil {
			return err
		}
		defer c.Close()
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := c.Read(make([]byte, 1))
		if n == 1 {
			return nil
		}
		return err
	}
	if err := pair(true, ks, "127.0.0.1"); err != nil {
		t.Fatalf("members with the store's certificate: %v", err)
	}
	if err := pair(true, ks, "member.example"); err == nil {
		t.Fatal("a host name the certificate does not name was accepted")
	}
	if err := pair(false, ks, "member.example"); err != nil {
		t.Fatalf("without host name checks: %v", err)
	}
	if err := pair(false, otherKS, "127.0.0.1"); err == nil {
		t.Fatal("a member certificate from another authority was accepted")
	}
}
