package cluster

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/cli/fourletter"
	"github.com/zkraft/zkraft/internal/security/zktls/zktlstest"
	"github.com/zkraft/zkraft/internal/testing/procs"
	"github.com/zkraft/zkraft/server"
)

// TestEnsembleQuorumTLS runs a three-process ensemble whose members talk
// over mutual TLS (zoo.cfg sslQuorum=true with ssl.quorum.* PEM stores):
// it elects a leader, replicates writes to every member, survives the
// leader's kill -9, and a member port refuses a peer that speaks plain
// TCP.
func TestEnsembleQuorumTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three server processes")
	}
	ks, ts, err := zktlstest.PEMStores(t.TempDir(), pkix.Name{CommonName: "member", Organization: []string{"zkraft"}})
	if err != nil {
		t.Fatal(err)
	}
	members := procs.StartEnsemble(t, 3, "sslQuorum=true", "ssl.quorum.keyStore.location="+ks, "ssl.quorum.trustStore.location="+ts)
	leader := procs.LeaderOf(t, members, nil)
	addrs := procs.ClientAddrs(members)
	c := procs.ConnectAdmin(t, addrs[:1])
	defer c.Close()
	if _, err := c.Create("/over-tls", []byte("v"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	want := fourletter.Field(fourletter.Ask(leader.ClientAddr, "srvr"), "Node count: ")
	for _, m := range members {
		deadline := time.Now().Add(10 * time.Second)
		for fourletter.Field(fourletter.Ask(m.ClientAddr, "srvr"), "Node count: ") != want {
			if time.Now().After(deadline) {
				t.Fatalf("member %d did not replicate over TLS", m.ID)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	// The member port speaks TLS and wants the peer's certificate: a
	// peer with the store's certificate completes a handshake, one without
	// a certificate or without TLS is refused.
	memberAddr := memberPort(t, members[0])
	pair, err := tls.LoadX509KeyPair(ks, ks)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	caPEM, _ := os.ReadFile(ts)
	roots.AppendCertsFromPEM(caPEM)
	peer := func(cert []tls.Certificate) error {
		nc, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", memberAddr,
			&tls.Config{RootCAs: roots, ServerName: "127.0.0.1", Certificates: cert, MaxVersion: tls.VersionTLS12})
		if err != nil {
			return err
		}
		defer nc.Close()
		_ = nc.SetDeadline(time.Now().Add(2 * time.Second))
		_, err = nc.Write([]byte("ZKR\x01?")) // an unknown stream: the member closes it
		return err
	}
	if err := peer([]tls.Certificate{pair}); err != nil {
		t.Fatalf("a peer with the member certificate: %v", err)
	}
	if err := peer(nil); err == nil {
		t.Fatal("a peer without a certificate completed a handshake")
	}
	nc, err := net.DialTimeout("tcp", memberAddr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	_, _ = nc.Write([]byte("ZKR\x01R\x00\x00\x00\x00\x00\x00\x00\x00"))
	if b, _ := io.ReadAll(nc); len(b) > 0 && b[0] != 0x15 { // 0x15: a TLS alert record
		t.Fatalf("plain-text peer got %q", b)
	}
	nc.Close()

	leader.Kill()
	next := procs.LeaderOf(t, members, leader)
	c2 := procs.ConnectAdmin(t, []string{next.ClientAddr})
	defer c2.Close()
	if _, err := c2.Create("/after-kill", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("write after the leader's kill: %v", err)
	}
}

// memberPort is m's member address from its zoo.cfg server line.
func memberPort(t *testing.T, m *procs.Member) string {
	t.Helper()
	values, err := server.ZooValues(m.CfgPath)
	if err != nil {
		t.Fatal(err)
	}
	line, ok := values["server.1"]
	if !ok {
		t.Fatal("no server.1 line")
	}
	addr, _, _ := strings.Cut(line, ";")
	return strings.TrimSuffix(addr, ":0")
}
