package session

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/jute"
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
	node, err := ensemble.Open(ensemble.Config{
		DataDir:  t.TempDir(),
		TickTime: 200 * time.Millisecond,
		Tree:     opts,
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{TickTime: 200 * time.Millisecond, FourLetterWhitelist: []string{"*"}}
	for _, m := range mutate {
		m(&cfg)
	}
	srv := New(cfg, node)
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

// expectClosed asserts the server closes the connection.
func (c *rawClient) expectClosed() {
	c.t.Helper()
	_ = c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadAll(c.br); err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			c.t.Fatal("connection still open")
		}
	}
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

func be32(v int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }

// ruokOnly answers ruok as package operator's FourLetter does, for the
// tests of how a word reaches the handler (the words are operator's).
type ruokOnly struct{}

func (ruokOnly) IsFourLetterWord(cmd string) bool { return cmd == "ruok" }

func (ruokOnly) AnswerFourLetterWord(*Server, string) []byte { return []byte("imok") }
