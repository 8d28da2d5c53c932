package operator

import (
	"testing"

	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/internal/testing/testmember"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/session"
	"github.com/zkraft/zkraft/znode"
)

// testServer is an in-process one-member ensemble with a client listener
// answering the four-letter words.
type testServer struct {
	node *ensemble.Node
	srv  *session.Server
	addr string
}

func startServer(t testing.TB, mutate ...func(*session.Config)) *testServer {
	t.Helper()
	return startServerTree(t, znode.Options{ExtendedTypes: true}, mutate...)
}

// startServerTree is startServer with the tree's options given.
func startServerTree(t testing.TB, opts znode.Options, mutate ...func(*session.Config)) *testServer {
	t.Helper()
	cfg := session.Config{TickTime: testmember.TickTime, FourLetter: FourLetter{}, FourLetterWhitelist: []string{"*"}}
	for _, m := range mutate {
		m(&cfg)
	}
	node, srv, addr := testmember.Start(t, opts, func(n *ensemble.Node) *session.Server { return session.New(cfg, n) })
	return &testServer{node: node, srv: srv, addr: addr}
}

var openACL = []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}
