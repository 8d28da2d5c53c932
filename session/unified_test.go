package session

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"net"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/internal/security/zktls"
	"github.com/zkraft/zkraft/internal/security/zktls/zktlstest"
	"github.com/zkraft/zkraft/internal/testing/rawclient"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// unifiedServer serves one listener with ServeUnified, its TLS side
// requiring a certificate from a test authority. It returns the server,
// its address and a client configuration with a certificate for
// CN=client from that authority.
func unifiedServer(t *testing.T) (*Server, string, *tls.Config) {
	t.Helper()
	ca, err := zktlstest.Issue(pkix.Name{CommonName: "test CA"}, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	srvLeaf, err := zktlstest.Issue(pkix.Name{CommonName: "localhost"}, &ca, false)
	if err != nil {
		t.Fatal(err)
	}
	cliLeaf, err := zktlstest.Issue(pkix.Name{CommonName: "client"}, &ca, false)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	keyStore, trustStore := filepath.Join(dir, "keystore.pem"), filepath.Join(dir, "truststore.pem")
	if err := zktlstest.WritePEM(keyStore, srvLeaf.Key, srvLeaf.Cert, ca.Cert); err != nil {
		t.Fatal(err)
	}
	if err := zktlstest.WritePEM(trustStore, nil, ca.Cert); err != nil {
		t.Fatal(err)
	}
	srvTLS, err := zktls.ServerConfig(zktls.Options{KeyStore: keyStore, TrustStore: trustStore})
	if err != nil {
		t.Fatal(err)
	}

	node, err := ensemble.Open(ensemble.Config{DataDir: t.TempDir(), TickTime: 200 * time.Millisecond, Tree: znode.Options{}})
	if err != nil {
		t.Fatal(err)
	}
	srv := New(Config{TickTime: 200 * time.Millisecond, FourLetter: ruokOnly{}}, node)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.ServeUnified(ln, srvTLS) }()
	t.Cleanup(func() {
		srv.Close()
		node.Close()
	})

	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	cliTLS := &tls.Config{
		RootCAs:      roots,
		ServerName:   "localhost",
		Certificates: []tls.Certificate{{Certificate: [][]byte{cliLeaf.Cert.Raw}, PrivateKey: cliLeaf.Key}},
	}
	return srv, ln.Addr().String(), cliTLS
}

// sessionIdentities opens a session on c and returns its identities.
func sessionIdentities(t *testing.T, c *rawclient.Client) []jute.ClientInfo {
	t.Helper()
	if resp := c.Connect(false); resp.SessionID == 0 {
		t.Fatal("no session")
	}
	c.Request(1, jute.OpWhoAmI, nil)
	var who jute.WhoAmIResponse
	if h := c.Reply(&who); h.Err != jute.OK {
		t.Fatalf("whoAmI: %v", h.Err)
	}
	return who.ClientInfo
}

// TestServeUnified serves plaintext and TLS clients on one port, as
// client.portUnification does: each gets a session, a TLS client's
// certificate is its x509 identity, four-letter words work in plaintext,
// an untrusted TLS client is refused, and a client that has sent nothing
// does not hold up Close.
func TestServeUnified(t *testing.T) {
	srv, addr, cliTLS := unifiedServer(t)

	plain := rawclient.Dial(t, addr)
	if got, want := sessionIdentities(t, plain), []jute.ClientInfo{{AuthScheme: "ip", User: "127.0.0.1"}}; !slices.Equal(got, want) {
		t.Errorf("plaintext whoAmI = %v, want %v", got, want)
	}

	tc, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", addr, cliTLS)
	if err != nil {
		t.Fatalf("TLS dial: %v", err)
	}
	t.Cleanup(func() { tc.Close() })
	secure := rawclient.New(t, tc)
	want := []jute.ClientInfo{{AuthScheme: "x509", User: "CN=client"}, {AuthScheme: "ip", User: "127.0.0.1"}} // ZooKeeper lists x509 first
	if got := sessionIdentities(t, secure); !slices.Equal(got, want) {
		t.Errorf("TLS whoAmI = %v, want %v", got, want)
	}

	fw := rawclient.Dial(t, addr)
	fw.SendRaw([]byte("ruok"))
	_ = fw.Conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if b, err := io.ReadAll(fw.Reader); err != nil || string(b) != "imok" {
		t.Errorf("ruok on the unified port = %q, %v", b, err)
	}

	// A client without a certificate: the handshake fails (ssl.clientAuth
	// defaults to need) and the connection is closed.
	anon := cliTLS.Clone()
	anon.Certificates = nil
	if nc, err := tls.Dial("tcp", addr, anon); err == nil {
		c := rawclient.New(t, nc)
		c.Send(&jute.ConnectRequest{TimeOut: 3000, Passwd: make([]byte, 16)})
		c.ExpectClosed()
		nc.Close()
	}
	// The server counts the failure after its handshake returns, which is
	// after the client has seen the alert and the close: wait for it.
	for deadline := time.Now().Add(5 * time.Second); srv.stats.authFailed.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if got := srv.stats.authFailed.Load(); got != 1 {
		t.Errorf("auth_failed_count = %d after one refused handshake, want 1", got)
	}

	// A client that never speaks: Close does not wait out its sniff.
	silent, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	srv.Close()
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %v with a silent client on the unified port", d)
	}
}
