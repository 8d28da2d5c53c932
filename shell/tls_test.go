package shell

import (
	"bytes"
	"crypto/x509/pkix"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/internal/security/zktls"
	"github.com/zkraft/zkraft/internal/security/zktls/zktlstest"
	zksession "github.com/zkraft/zkraft/session"
)

// TestClientConfigurationTLS connects the shell over TLS with a zkCli
// -client-configuration file (zookeeper.client.secure=true and the ssl
// stores) to a zkraft secure port that requires client certificates;
// whoami shows the certificate's x509 identity. Without the file the
// secure port lets no session in.
func TestClientConfigurationTLS(t *testing.T) {
	dir := t.TempDir()
	ks, ts, err := zktlstest.PEMStores(dir, pkix.Name{CommonName: "shell", Organization: []string{"zkraft"}})
	if err != nil {
		t.Fatal(err)
	}
	node, err := ensemble.Open(ensemble.Config{DataDir: t.TempDir(), TickTime: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	srv := zksession.New(zksession.Config{TickTime: 2 * time.Second}, node)
	serverTLS, err := zktls.ServerConfig(zktls.Options{KeyStore: ks, TrustStore: ts})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.ServeSecure(ln, serverTLS) }()
	t.Cleanup(func() { srv.Close(); node.Close() })

	props := filepath.Join(dir, "client.properties")
	text := "zookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty\nzookeeper.client.secure=true\n" +
		"zookeeper.ssl.keyStore.location=" + ks + "\nzookeeper.ssl.trustStore.location=" + ts + "\n"
	if err := os.WriteFile(props, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadClientConfiguration(props)
	if err != nil || cfg == nil {
		t.Fatalf("client configuration: %v %v", cfg, err)
	}
	run := func(opts Options, args ...string) (string, int) {
		var out, errw bytes.Buffer
		opts.Server, opts.Timeout, opts.WaitForConnection = ln.Addr().String(), 5*time.Second, true
		code := Run(opts, args, "", strings.NewReader(""), &out, &errw)
		return out.String() + errw.String(), code
	}
	if out, code := run(Options{TLS: cfg}, "whoami"); code != 0 || !strings.Contains(out, "x509: CN=shell,O=zkraft") {
		t.Fatalf("whoami over TLS (exit %d):\n%s", code, out)
	}
	if out, code := run(Options{TLS: cfg}, "create", "/over-tls", "v"); code != 0 || !strings.Contains(out, "Created /over-tls") {
		t.Fatalf("create over TLS (exit %d):\n%s", code, out)
	}
	if out, code := run(Options{}, "ls", "/"); code == 0 {
		t.Fatalf("plain text to the secure port succeeded:\n%s", out)
	}

	plain := filepath.Join(dir, "plain.properties")
	if err := os.WriteFile(plain, []byte("zookeeper.client.secure=false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if cfg, err := LoadClientConfiguration(plain); cfg != nil || err != nil {
		t.Fatalf("client.secure=false: %v %v", cfg, err)
	}
}
