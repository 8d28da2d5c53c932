// Package servertest starts real zkraft servers inside a Go test: one
// member, or an ensemble of several on loopback, each with a temporary
// data directory, stopped and removed when the test ends. It is what
// Curator's TestingServer and TestingCluster are to Java: a test of code
// that uses ZooKeeper (through go-zookeeper or any other client) runs
// against the real server, not a mock, without a JVM:
//
//	func TestLock(t *testing.T) {
//		zs := servertest.Start(t)
//		conn, _, err := zk.Connect([]string{zs.Addr()}, 5*time.Second)
//		...
//	}
//
// The servers run in the test's process with short timers (a tick of
// 100 ms: sessions of 200 ms to 2 s, a lost leader replaced in about a
// second) and log through the test's log, shown for a failed test.
package servertest

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/server"
)

// Option changes the configuration of the servers a test starts.
type Option func(*server.Config)

// WithConfig lets f change each server's configuration (f sees the
// member's id, data directory and addresses already set).
func WithConfig(f func(*server.Config)) Option { return Option(f) }

// Server is one running zkraft server.
type Server struct {
	t   testing.TB
	cfg server.Config
	srv *server.Server
	log *zap.Logger
}

// Start starts one standalone server (an ensemble of one) and stops it
// when the test ends.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	cfg := baseConfig(t, opts)
	s := &Server{t: t, cfg: cfg, log: zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))}
	s.start()
	t.Cleanup(s.Stop)
	return s
}

// baseConfig is a server's configuration for a test: a temporary data
// directory, a free client port on loopback, short timers, no AdminServer,
// the collector left alone.
func baseConfig(t testing.TB, opts []Option) server.Config {
	cfg := server.DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.ClientAddr = freeAddr(t)
	cfg.TickTime = 100 * time.Millisecond
	cfg.FourLetterWords = []string{"*"}
	cfg.KeepGC = true
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}

func (s *Server) start() {
	s.t.Helper()
	srv, err := server.Start(s.cfg, s.log)
	if err != nil {
		s.t.Fatalf("servertest: start zkraft: %v", err)
	}
	s.srv = srv
}

// Addr is the client address (host:port) to connect to.
func (s *Server) Addr() string { return s.cfg.ClientAddr }

// DataDir is the server's data directory.
func (s *Server) DataDir() string { return s.cfg.DataDir }

// Server is the running server itself (its member, its lifecycle).
func (s *Server) Server() *server.Server { return s.srv }

// Stop stops the server, as SIGTERM does (sessions live on, to resume on
// another member or after Restart). Stopping a stopped server does
// nothing.
func (s *Server) Stop() {
	if s.srv == nil {
		return
	}
	if err := s.srv.Close(); err != nil {
		s.t.Errorf("servertest: stop zkraft: %v", err)
	}
	s.srv = nil
}

// Restart starts a stopped server again on its data directory and
// address. A member of an ensemble returns once it has rejoined (the
// others must be running).
func (s *Server) Restart() {
	s.t.Helper()
	if s.srv != nil {
		s.t.Fatal("servertest: Restart of a running server")
	}
	s.start()
}

// Ensemble is several zkraft servers forming one ensemble on loopback.
type Ensemble struct {
	Servers []*Server
}

// StartEnsemble starts an ensemble of n members (3 or 5, say), waits
// until it has a leader, and stops it when the test ends.
func StartEnsemble(t testing.TB, n int, opts ...Option) *Ensemble {
	t.Helper()
	if n < 1 {
		t.Fatalf("servertest: an ensemble of %d members", n)
	}
	e := &Ensemble{}
	for i := 1; i <= n; i++ {
		cfg := baseConfig(t, nil)
		cfg.SetID(int64(i))
		e.Servers = append(e.Servers, &Server{t: t, cfg: cfg,
			log: zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel)).Named(fmt.Sprintf("member%d", i))})
	}
	var peers []backend.Peer
	for i, s := range e.Servers {
		peers = append(peers, backend.Peer{ID: int64(i + 1), Addr: freeAddr(t), ClientAddr: s.cfg.ClientAddr})
	}
	for _, s := range e.Servers {
		s.cfg.Members = peers
		for _, o := range opts {
			o(&s.cfg)
		}
	}
	// A member opens once the ensemble has a leader: start them together.
	errs := make(chan error, n)
	for _, s := range e.Servers {
		go func() {
			srv, err := server.Start(s.cfg, s.log)
			s.srv = srv
			errs <- err
		}()
	}
	var failed error
	for range e.Servers {
		if err := <-errs; err != nil && failed == nil {
			failed = err
		}
	}
	for _, s := range e.Servers {
		t.Cleanup(s.Stop)
	}
	if failed != nil {
		t.Fatalf("servertest: start the ensemble: %v", failed)
	}
	e.WaitLeader()
	return e
}

// Addrs are the members' client addresses, for a client's server list.
func (e *Ensemble) Addrs() []string {
	var out []string
	for _, s := range e.Servers {
		out = append(out, s.Addr())
	}
	return out
}

// ConnectString is the members' client addresses, comma separated.
func (e *Ensemble) ConnectString() string { return strings.Join(e.Addrs(), ",") }

// Leader is the running member that leads now, nil if none does.
func (e *Ensemble) Leader() *Server {
	for _, s := range e.Servers {
		if s.srv != nil && s.srv.Member() != nil && s.srv.Member().IsLeader() {
			return s
		}
	}
	return nil
}

// WaitLeader waits up to 30 s for a running member to lead, and for
// every running member to know a leader, and returns the leader.
func (e *Ensemble) WaitLeader() *Server {
	t := e.Servers[0].t
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if l := e.Leader(); l != nil && e.allKnowLeader() {
			return l
		}
		if time.Now().After(deadline) {
			t.Fatal("servertest: the ensemble has no leader after 30 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (e *Ensemble) allKnowLeader() bool {
	for _, s := range e.Servers {
		if s.srv == nil {
			continue
		}
		if m := s.srv.Member(); m == nil || !m.HasQuorum() {
			return false
		}
	}
	return true
}

// freeAddr is a loopback address with a port free now.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
