package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"software.sslmate.com/src/go-pkcs12"
)

// nettyClientJars complete Debian's zookeeper.jar for TLS, whose manifest
// lists Netty's transport and handler but not the codec (the server's
// Netty factory needs it) or the resolver (the client's).
var nettyClientJars = []string{"/usr/share/java/netty-codec.jar", "/usr/share/java/netty-resolver.jar"}

// tlsStores makes, with the JDK's keytool as an operator would, a PKCS12
// key store holding a self-signed certificate for CN=localhost (SAN
// 127.0.0.1) and a trust store holding that certificate; server and
// clients use both.
func tlsStores(t *testing.T) (keyStore, trustStore string) {
	t.Helper()
	keytool, err := exec.LookPath("keytool")
	requireTool(t, err)
	dir := t.TempDir()
	keyStore, trustStore = filepath.Join(dir, "keystore.p12"), filepath.Join(dir, "truststore.p12")
	crt := filepath.Join(dir, "zk.crt")
	for _, args := range [][]string{
		{"-genkeypair", "-alias", "zk", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=localhost",
			"-ext", "SAN=IP:127.0.0.1,DNS:localhost", "-validity", "2", "-keystore", keyStore, "-storetype", "PKCS12", "-storepass", "secret123"},
		{"-exportcert", "-alias", "zk", "-keystore", keyStore, "-storepass", "secret123", "-file", crt},
		{"-importcert", "-noprompt", "-alias", "zk", "-file", crt, "-keystore", trustStore, "-storetype", "PKCS12", "-storepass", "secret123"},
	} {
		if out, err := runTool(t, time.Minute, "", keytool, args...); err != nil {
			t.Fatalf("keytool: %v\n%s", err, out)
		}
	}
	return keyStore, trustStore
}

// TestTLSClientPort serves clients over TLS on secureClientPort, configured
// by the same zoo.cfg ssl.* lines for zkraft and for Apache ZooKeeper (its
// Netty server factory), with keytool's PKCS12 stores. The Java client
// (zkCli over ClientCnxnSocketNetty) gets the same transcript from both:
// its certificate's subject is its x509 identity (whoami), an x509 ACL
// admits it and an ACL for another name does not. go-zookeeper over
// crypto/tls and kazoo over Python's ssl work with a certificate; without
// one, or without TLS, the secure port refuses the client.
func TestTLSClientPort(t *testing.T) {
	skipShort(t)
	t.Parallel()
	needJava(t)
	requireTool(t, needFiles(nettyClientJars...))
	keyStore, trustStore := tlsStores(t)
	secure := map[string]string{}
	for _, kind := range []string{targetZkraft, targetZookeeper} {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		StartServer(t, ServerOptions{Kind: kind, ZooCfg: []string{
			fmt.Sprintf("secureClientPort=%d", port), "secureClientPortAddress=127.0.0.1",
			"serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory",
			"ssl.keyStore.location=" + keyStore, "ssl.keyStore.password=secret123",
			"ssl.trustStore.location=" + trustStore, "ssl.trustStore.password=secret123",
		}})
		secure[kind] = fmt.Sprintf("127.0.0.1:%d", port)
	}

	script := strings.Join([]string{
		"whoami",
		"create /tls mine x509:CN=localhost:cdrwa",
		"getAcl /tls",
		"get /tls",
		"create /tls-other theirs x509:CN=someone:cdrwa",
		"get /tls-other",
		"create /tls-bad x x509:notadn:cdrwa",
		"delete /tls",
		"quit",
	}, "\n") + "\n"
	transcripts := map[string]string{}
	for _, kind := range []string{targetZkraft, targetZookeeper} {
		transcripts[kind] = zkCliTLS(t, secure[kind], keyStore, trustStore, script)
	}
	if transcripts[targetZkraft] != transcripts[targetZookeeper] {
		t.Errorf("zkCli over TLS differs\nzookeeper:\n%s\nzkraft:\n%s", transcripts[targetZookeeper], transcripts[targetZkraft])
	}
	for _, want := range []string{"x509: CN=localhost", "'x509,'CN=localhost\n: cdrwa", "mine", "Insufficient permission : /tls-other"} {
		if !strings.Contains(transcripts[targetZkraft], want) {
			t.Errorf("zkraft transcript lacks %q:\n%s", want, transcripts[targetZkraft])
		}
	}

	// go-zookeeper over crypto/tls, with the key store's certificate.
	cert, roots := goTLSCert(t, keyStore, trustStore)

	// kazoo over Python's ssl, with the same certificate as PEM files.
	dir := t.TempDir()
	certPEM, keyPEM := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	der, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(certPEM, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Leaf.Raw}), 0o600)
	_ = os.WriteFile(keyPEM, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
	kazooAlike(t, "tls.py", "id=Id(scheme='x509', id='CN=localhost')", func(kind string) []string {
		return []string{secure[kind], certPEM, keyPEM, certPEM, "/kazoo-tls"}
	})
	dialTLS := func(withCert bool) zk.Dialer {
		return func(network, address string, timeout time.Duration) (net.Conn, error) {
			cfg := &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"}
			if withCert {
				cfg.Certificates = []tls.Certificate{cert}
			}
			return tls.DialWithDialer(&net.Dialer{Timeout: timeout}, network, address, cfg)
		}
	}
	c, _, err := zk.Connect([]string{secure[targetZkraft]}, sessionTimeout, zk.WithDialer(dialTLS(true)), zk.WithLogger(clientLogger()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Create("/tls-go", []byte("v"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create over TLS: %v", err)
	}
	if data, _, err := c.Get("/tls-go"); err != nil || string(data) != "v" {
		t.Fatalf("get over TLS: %q %v", data, err)
	}
	// Without a client certificate (ssl.clientAuth defaults to need), and
	// in plain text, the secure port lets no session in.
	if nc, err := dialTLS(false)("tcp", secure[targetZkraft], 5*time.Second); err == nil {
		_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
		_, _ = nc.Write([]byte("ruok"))
		if b, err := readAllConn(nc); err == nil && string(b) == "imok" {
			t.Error("a TLS client without a certificate was served")
		}
		nc.Close()
	}
	if nc, err := net.DialTimeout("tcp", secure[targetZkraft], 5*time.Second); err == nil {
		_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
		_, _ = nc.Write([]byte("ruok\x00\x00\x00\x00")) // more than a TLS record header
		if b, _ := readAllConn(nc); strings.Contains(string(b), "imok") {
			t.Error("a plain-text client was served on the secure port")
		}
		nc.Close()
	}
}

// zkCliTLS runs script in zkCli (ZooKeeperMain over Netty) against addr:
// over TLS with keytool's stores (password secret123) when keyStore is
// set, in plain text otherwise. It returns the normalized transcript.
func zkCliTLS(t *testing.T, addr, keyStore, trustStore, script string) string {
	t.Helper()
	jvm := []string{"-Dzookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty"}
	if keyStore != "" {
		jvm = append(jvm, "-Dzookeeper.client.secure=true",
			"-Dzookeeper.ssl.keyStore.location="+keyStore, "-Dzookeeper.ssl.keyStore.password=secret123",
			"-Dzookeeper.ssl.trustStore.location="+trustStore, "-Dzookeeper.ssl.trustStore.password=secret123")
	}
	return zkCli(t, addr, script, jvm...)
}

// goTLSCert reads keytool's PKCS12 stores for crypto/tls.
func goTLSCert(t *testing.T, keyStore, trustStore string) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	data, err := os.ReadFile(keyStore)
	if err != nil {
		t.Fatal(err)
	}
	key, leaf, _, err := pkcs12.DecodeChain(data, "secret123")
	if err != nil {
		t.Fatal(err)
	}
	tdata, err := os.ReadFile(trustStore)
	if err != nil {
		t.Fatal(err)
	}
	trusted, err := pkcs12.DecodeTrustStore(tdata, "secret123")
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	for _, c := range trusted {
		roots.AddCert(c)
	}
	return tls.Certificate{Certificate: [][]byte{leaf.Raw}, PrivateKey: key, Leaf: leaf}, roots
}

func readAllConn(nc net.Conn) ([]byte, error) {
	var out []byte
	buf := make([]byte, 512)
	for {
		n, err := nc.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			return out, err
		}
	}
}

var tlsVolatile = regexp.MustCompile(`^(WATCHER::|Connecting to |WatchedEvent state:(Closed|Disconnected) )`)

// normalizeTLSTranscript makes zkCli transcripts comparable: it drops the
// connection chatter, which names the server's address, and blank lines,
// and moves the session events (printed by the client's event thread, so
// placed anywhere among the commands' output, and repeated by reconnects
// the JVM may or may not make before it exits) after the rest, sorted and
// each once; Closed and Disconnected are dropped, as the JVM may exit
// before printing them. The events that matter stay: SaslAuthenticated and
// AuthFailed.
func normalizeTLSTranscript(s string) string {
	var lines, events []string
	for _, l := range strings.Split(s, "\n") {
		switch {
		case strings.TrimSpace(l) == "" || tlsVolatile.MatchString(l):
		case strings.HasPrefix(l, "WatchedEvent "):
			events = append(events, l)
		default:
			lines = append(lines, l)
		}
	}
	sort.Strings(events)
	return strings.Join(append(lines, slices.Compact(events)...), "\n")
}
