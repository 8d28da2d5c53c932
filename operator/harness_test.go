package operator

import (
	"bufio"
	"bytes"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/internal/testing/testport"
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
	node, err := ensemble.Open(ensemble.Config{
		DataDir:  t.TempDir(),
		TickTime: 200 * time.Millisecond,
		Tree:     opts,
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := session.Config{TickTime: 200 * time.Millisecond, FourLetter: FourLetter{}, FourLetterWhitelist: []string{"*"}}
	for _, m := range mutate {
		m(&cfg)
	}
	srv := session.New(cfg, node)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	ts := &testServer{node: node, srv: srv, addr: ln.Addr().String()}
	t.Cleanup(func() {
		srv.Close()
		node.Close()
	})
	return ts
}

// rawClient speaks frames over a plain socket (the nats-server setupConn
// pattern): send bytes, expect bytes.
type rawClient struct {
	t  testing.TB
	nc net.Conn
	br *bufio.Reader
}

func dialRaw(t testing.TB, addr string) *rawClient {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawClient{t: t, nc: nc, br: bufio.NewReader(nc)}
}

func (c *rawClient) sendRaw(b []byte) {
	c.t.Helper()
	_ = c.nc.SetWriteDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// send frames rec with its length prefix.
func (c *rawClient) send(recs ...jute.Record) {
	c.t.Helper()
	var w jute.Writer
	at := jute.BeginFrame(&w)
	for _, r := range recs {
		r.Encode(&w)
	}
	jute.EndFrame(&w, at)
	c.sendRaw(w.Buf)
}

// request sends a header and body.
func (c *rawClient) request(xid int32, op jute.Op, body jute.Record) {
	c.t.Helper()
	h := &jute.RequestHeader{Xid: xid, Type: op}
	if body == nil {
		c.send(h)
		return
	}
	c.send(h, body)
}

// frame reads one frame.
func (c *rawClient) frame() []byte {
	c.t.Helper()
	_ = c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, err := jute.ReadFrame(c.br, nil, 1<<24)
	if err != nil {
		c.t.Fatalf("read frame: %v", err)
	}
	return b
}

// reply reads a reply, decoding its body into body when err is OK.
func (c *rawClient) reply(body jute.Record) jute.ReplyHeader {
	c.t.Helper()
	r := jute.NewReader(c.frame())
	var h jute.ReplyHeader
	if err := h.Decode(r); err != nil {
		c.t.Fatal(err)
	}
	if body != nil && h.Err == jute.OK && h.Xid != jute.XidNotification {
		if err := body.Decode(r); err != nil {
			c.t.Fatalf("decode body of xid %d: %v", h.Xid, err)
		}
	}
	return h
}

// connect performs the handshake for a new session.
func (c *rawClient) connect(readOnlyByte bool) jute.ConnectResponse {
	c.t.Helper()
	c.send(&jute.ConnectRequest{TimeOut: 3000, Passwd: make([]byte, 16), HasReadOnly: readOnlyByte})
	var resp jute.ConnectResponse
	if err := jute.Unmarshal(c.frame(), &resp); err != nil {
		c.t.Fatal(err)
	}
	return resp
}

func readAll(t *testing.T, c *rawClient) string {
	t.Helper()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(c.br)
	return buf.String()
}

var openACL = []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}

// startEnsemble opens an in-process ensemble of n members on loopback
// ports, closed when the test ends; nil if a member failed to open.
func startEnsemble(t *testing.T, n int) []*ensemble.Node {
	t.Helper()
	var peers []backend.Peer
	for i := 1; i <= n; i++ {
		// Listening on :0 and closing could hand two members one port.
		addr, err := testport.Addr()
		if err != nil {
			t.Fatal(err)
		}
		peers = append(peers, backend.Peer{ID: uint8(i), Addr: addr})
	}
	nodes := make([]*ensemble.Node, n)
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			n, err := ensemble.Open(ensemble.Config{ID: uint8(i + 1), DataDir: t.TempDir(), TickTime: 200 * time.Millisecond, Peers: peers})
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

// serveOn serves srv on a loopback port until the test ends and returns
// its address.
func serveOn(t *testing.T, srv *session.Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// loseQuorum closes others and waits until survivor knows it has no
// quorum.
func loseQuorum(t *testing.T, survivor *ensemble.Node, others ...*ensemble.Node) {
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
