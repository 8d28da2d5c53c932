// Package testmember opens in-process ensemble members for the tests of
// the packages that serve them (session, operator): a one-member
// ensemble, an ensemble of n on loopback ports, and a client server on a
// loopback port. It takes no server package, so that package's own
// tests may use it. Only tests import it.
package testmember

import (
	"net"
	"sync"
	"testing"
	"time"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/internal/testing/testport"
	"github.com/zkraft/zkraft/znode"
)

// TickTime is the members' tick: short, so elections and session
// expiry take a fraction of a second.
const TickTime = 200 * time.Millisecond

// Server is a client server on a member (a *session.Server).
type Server interface {
	Serve(ln net.Listener) error
	Close() error
}

// Start opens a one-member ensemble whose tree has opts, makes a server
// of it with newServer and serves it on a loopback port until the test
// ends (the server closed before the member). It returns the member,
// the server and its address.
func Start[S Server](t testing.TB, opts znode.Options, newServer func(*ensemble.Node) S) (*ensemble.Node, S, string) {
	t.Helper()
	node, err := ensemble.Open(ensemble.Config{DataDir: t.TempDir(), TickTime: TickTime, Tree: opts})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { node.Close() })
	srv := newServer(node)
	return node, srv, Serve(t, srv)
}

// Serve serves srv on a loopback port and returns its address; srv
// closes when the test ends.
func Serve(t testing.TB, srv Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// Ensemble opens an in-process ensemble of n members on loopback ports,
// closed when the test ends; nil if a member failed to open.
func Ensemble(t testing.TB, n int) []*ensemble.Node {
	t.Helper()
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(i + 1)
	}
	return EnsembleOf(t, ids...)
}

// EnsembleOf is Ensemble with the members' server ids given, in order.
func EnsembleOf(t testing.TB, ids ...int64) []*ensemble.Node {
	t.Helper()
	var peers []backend.Peer
	for _, id := range ids {
		// Listening on :0 and closing could hand two members one port.
		addr, err := testport.Addr()
		if err != nil {
			t.Fatal(err)
		}
		peers = append(peers, backend.Peer{ID: id, Addr: addr})
	}
	nodes := make([]*ensemble.Node, len(ids))
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			n, err := ensemble.Open(ensemble.Config{ID: ids[i], DataDir: t.TempDir(), TickTime: TickTime, Peers: peers})
			if err != nil {
				t.Error(err)
				return
			}
			nodes[i] = n
		}(i)
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, n := range nodes {
			if n != nil {
				n.Close()
			}
		}
	})
	if t.Failed() {
		return nil
	}
	return nodes
}

// LoseQuorum closes others and waits until survivor knows it has no
// quorum.
func LoseQuorum(t testing.TB, survivor *ensemble.Node, others ...*ensemble.Node) {
	t.Helper()
	for _, n := range others {
		n.Close()
	}
	deadline := time.Now().Add(10 * time.Second)
	for survivor.HasQuorum() {
		if time.Now().After(deadline) {
			t.Fatal("survivor still believes it has a quorum")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
