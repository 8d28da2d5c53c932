package session

import (
	"encoding/binary"
	"net"
	"testing"

	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/internal/testing/testmember"
	"github.com/zkraft/zkraft/znode"
)

// testServer is an in-process one-member ensemble with a client listener.
type testServer struct {
	node *ensemble.Node
	srv  *Server
	addr string
}

func startServer(t testing.TB, mutate ...func(*Config)) *testServer {
	t.Helper()
	return startServerTree(t, znode.Options{ExtendedTypes: true}, mutate...)
}

// startServerTree is startServer with the tree's options given.
func startServerTree(t testing.TB, opts znode.Options, mutate ...func(*Config)) *testServer {
	t.Helper()
	cfg := Config{TickTime: testmember.TickTime, FourLetterWhitelist: []string{"*"}}
	for _, m := range mutate {
		m(&cfg)
	}
	node, srv, addr := testmember.Start(t, opts, func(n *ensemble.Node) *Server { return New(cfg, n) })
	return &testServer{node: node, srv: srv, addr: addr}
}

func be32(v int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }

// ruokOnly answers ruok as package operator's FourLetter does, for the
// tests of how a word reaches the handler (the words are operator's).
type ruokOnly struct{}

func (ruokOnly) IsFourLetterWord(cmd string) bool { return cmd == "ruok" }

func (ruokOnly) AnswerFourLetterWord(*Server, string) []byte { return []byte("imok") }

// pipeConn is a connection of ts's server over one end of a net.Pipe,
// not served (no reader): for calls into the connection's own code.
func pipeConn(t testing.TB, ts *testServer) *conn {
	a, z := net.Pipe()
	t.Cleanup(func() { a.Close(); z.Close() })
	return newConn(ts.srv, a)
}
