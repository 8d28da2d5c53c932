package e2e

import (
	"net"
	"strings"
	"testing"
	"time"
)

// TestTLSPortUnification serves plain-text and TLS clients on the one
// client port, configured for zkraft and for Apache ZooKeeper (its Netty
// server factory) by the same zoo.cfg lines: client.portUnification=true
// and the ssl.* stores, no secureClientPort. zkCli over TLS and zkCli in
// plain text share the port and get the same transcripts from both
// servers: the TLS session's certificate is its x509 identity and admits
// it to an x509 ACL that the plain-text session is denied. A four-letter
// word still works on the port.
func TestTLSPortUnification(t *testing.T) {
	skipShort(t)
	t.Parallel()
	needJava(t)
	requireTool(t, needFiles(nettyClientJars...))
	keyStore, trustStore := tlsStores(t)
	addrs := map[string]string{}
	for _, kind := range []string{targetZkraft, targetZookeeper} {
		s := StartServer(t, ServerOptions{Kind: kind, ZooCfg: []string{
			"client.portUnification=true", "4lw.commands.whitelist=ruok,srvr",
			"serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory",
			// ZooKeeper's dual-mode handler looks the provider up by name
			// and refuses TLS clients ("X509 Auth provider not found")
			// without this line, as its admin guide's TLS example has it.
			"authProvider.x509=org.apache.zookeeper.server.auth.X509AuthenticationProvider",
			"ssl.keyStore.location=" + keyStore, "ssl.keyStore.password=secret123",
			"ssl.trustStore.location=" + trustStore, "ssl.trustStore.password=secret123",
		}})
		addrs[kind] = s.Addr
	}

	secureScript := strings.Join([]string{
		"whoami",
		"create /unified mine x509:CN=localhost:cdrwa",
		"getAcl /unified",
		"get /unified",
		"create /open plain world:anyone:cdrwa",
		"quit",
	}, "\n") + "\n"
	plainScript := strings.Join([]string{
		"whoami",
		"get /unified",
		"get /open",
		"set /open changed",
		"get /open",
		"quit",
	}, "\n") + "\n"
	got := map[string][2]string{}
	for _, kind := range []string{targetZkraft, targetZookeeper} {
		got[kind] = [2]string{
			zkCliTLS(t, addrs[kind], keyStore, trustStore, secureScript),
			zkCliTLS(t, addrs[kind], "", "", plainScript),
		}
	}
	for i, name := range []string{"TLS", "plain text"} {
		if z, k := got[targetZookeeper][i], got[targetZkraft][i]; z != k {
			t.Errorf("zkCli over %s on the unified port differs\nzookeeper:\n%s\nzkraft:\n%s", name, z, k)
		}
	}
	for i, want := range []string{"x509: CN=localhost", "Insufficient permission : /unified"} {
		if !strings.Contains(got[targetZkraft][i], want) {
			t.Errorf("zkraft transcript lacks %q:\n%s", want, got[targetZkraft][i])
		}
	}
	if strings.Contains(got[targetZkraft][1], "x509") {
		t.Errorf("the plain-text session has an x509 identity:\n%s", got[targetZkraft][1])
	}

	for _, kind := range []string{targetZkraft, targetZookeeper} {
		nc, err := net.DialTimeout("tcp", addrs[kind], 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
		_, _ = nc.Write([]byte("ruok"))
		b, _ := readAllConn(nc)
		nc.Close()
		if string(b) != "imok" {
			t.Errorf("%s: ruok on the unified port = %q", kind, b)
		}
	}
}
