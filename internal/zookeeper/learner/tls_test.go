package learner

import (
	"context"
	"crypto/tls"
	"crypto/x509/pkix"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/security/zktls"
	"github.com/zkraft/zkraft/internal/security/zktls/zktlstest"
	"github.com/zkraft/zkraft/internal/testing/zkleader"
	"github.com/zkraft/zkraft/jute"
)

// quorumTLS makes stores of a new authority and returns the server and
// client sides of mutual quorum TLS with them.
func quorumTLS(t *testing.T, cn string) (server, client *tls.Config) {
	t.Helper()
	ks, ts, err := zktlstest.PEMStores(t.TempDir(), pkix.Name{CommonName: cn})
	if err != nil {
		t.Fatal(err)
	}
	server, client, err = zktls.MemberConfigs(zktls.Options{KeyStore: ks, TrustStore: ts}, true)
	if err != nil {
		t.Fatal(err)
	}
	return server, client
}

// TestFollowOverTLS: with Config.TLS the learner's connection to the
// leader is TLS, presenting its certificate, and the protocol runs over
// it to UPTODATE.
func TestFollowOverTLS(t *testing.T) {
	serverCfg, clientCfg := quorumTLS(t, "quorum")
	ldr := zkleader.Listen(t)
	l := New(Config{ID: 4, Servers: []string{ldr.Addr()}, TLS: clientCfg, Retry: 10 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = l.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	raw, err := ldr.Listener().Accept()
	if err != nil {
		t.Fatal(err)
	}
	tc := tls.Server(raw, serverCfg)
	_ = tc.SetDeadline(time.Now().Add(10 * time.Second))
	if err := tc.Handshake(); err != nil {
		t.Fatalf("the leader's side of the handshake: %v", err)
	}
	if cs := tc.ConnectionState(); len(cs.PeerCertificates) == 0 || cs.PeerCertificates[0].Subject.CommonName != "quorum" {
		t.Fatalf("the learner presented %d certificates, want its key store's", len(cs.PeerCertificates))
	}
	f := ldr.Conn(tc)
	created := ldr.Log(zkleader.Txn{Type: jute.OpCreate, Record: zkleader.CreateTxn("/tls", nil, false)})
	f.Sync(f.Handshake())
	// The PING's reply comes from the stream, after the status is set.
	f.Ping()
	if st := l.Status(); !st.Synced || st.LastZxid != created.Zxid {
		t.Fatalf("status %+v after UPTODATE over TLS", st)
	}
}

// TestFollowTLSFailures: a closed port is errNotLeader (every server but
// the leader); an untrusted leader certificate, a leader refusing the
// learner's certificate and a port that does not answer the handshake
// (bounded by DialTimeout) are errTLS.
func TestFollowTLSFailures(t *testing.T) {
	serverCfg, clientCfg := quorumTLS(t, "quorum")
	_, strangerCfg := quorumTLS(t, "stranger")
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()
	follow := func(addr string, cfg *tls.Config) error {
		l := New(Config{ID: 4, Servers: []string{addr}, TLS: cfg, DialTimeout: time.Second})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return l.follow(ctx, addr)
	}
	if err := follow(closedAddr, clientCfg); !errors.Is(err, errNotLeader) || errors.Is(err, errTLS) {
		t.Errorf("a closed port: %v, want errNotLeader", err)
	}
	leader := tlsLeader(t, serverCfg)
	if err := follow(leader, strangerCfg); !errors.Is(err, errTLS) {
		t.Errorf("an untrusted leader: %v, want errTLS", err)
	}
	for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		cfg := clientCfg.Clone()
		cfg.MaxVersion = v
		refusing := serverCfg.Clone()
		refusing.ClientCAs = strangerCfg.RootCAs
		if err := follow(tlsLeader(t, refusing), cfg); !errors.Is(err, errTLS) {
			t.Errorf("TLS %#x, a leader refusing the certificate: %v, want errTLS", v, err)
		}
	}
	// A port that takes the connection and never answers.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			nc, err := silent.Accept()
			if err != nil {
				return
			}
			defer nc.Close()
		}
	}()
	start := time.Now()
	if err := follow(silent.Addr().String(), clientCfg); !errors.Is(err, errTLS) || time.Since(start) > 5*time.Second {
		t.Errorf("a silent port: %v after %v, want errTLS after DialTimeout", err, time.Since(start))
	}
}

// TestTLSFailureLoggedOnce: Run retrying an untrusted leader warns once,
// not on every round.
func TestTLSFailureLoggedOnce(t *testing.T) {
	serverCfg, _ := quorumTLS(t, "quorum")
	_, strangerCfg := quorumTLS(t, "stranger")
	loggedOnce(t, Config{ID: 4, Servers: []string{tlsLeader(t, serverCfg)}, TLS: strangerCfg}, "learner: quorum TLS handshake failed")
}

// tlsLeader listens on a loopback port until the test ends as a TLS
// leader of cfg that answers the handshake and then, had it completed,
// closes; it returns the address.
func tlsLeader(t *testing.T, cfg *tls.Config) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			tc := tls.Server(nc, cfg)
			_ = tc.SetDeadline(time.Now().Add(5 * time.Second))
			_ = tc.Handshake()
			tc.Close()
		}
	}()
	return ln.Addr().String()
}
