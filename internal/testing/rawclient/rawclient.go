// Package rawclient is a ZooKeeper client for tests that speaks the
// client protocol as raw Jute frames over one connection (the
// nats-server setupConn pattern): send records, expect frames. A test
// controls every byte and sees every reply as the server framed it,
// which no real client library allows. Only tests import it.
package rawclient

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// Client is one raw connection to a server. Its methods call t.Fatal,
// so only the test's goroutine may call them.
type Client struct {
	t testing.TB
	// Conn is the connection, for a test's own deadlines, writes and
	// close.
	Conn net.Conn
	// Reader reads what the server sends; the methods read through it.
	Reader *bufio.Reader
}

// Dial connects to addr; the connection closes when the test ends.
func Dial(t testing.TB, addr string) *Client {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return New(t, nc)
}

// New speaks over nc (a TLS or in-process connection), which the caller
// closes.
func New(t testing.TB, nc net.Conn) *Client {
	return &Client{t: t, Conn: nc, Reader: bufio.NewReader(nc)}
}

// SendRaw writes b as it is.
func (c *Client) SendRaw(b []byte) {
	c.t.Helper()
	_ = c.Conn.SetWriteDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Conn.Write(b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// Send writes recs as one frame, with its length prefix.
func (c *Client) Send(recs ...jute.Record) {
	c.t.Helper()
	var w jute.Writer
	at := jute.BeginFrame(&w)
	for _, r := range recs {
		r.Encode(&w)
	}
	jute.EndFrame(&w, at)
	c.SendRaw(w.Buf)
}

// Request sends a request: its header and body (none if nil).
func (c *Client) Request(xid int32, op jute.Op, body jute.Record) {
	c.t.Helper()
	h := &jute.RequestHeader{Xid: xid, Type: op}
	if body == nil {
		c.Send(h)
		return
	}
	c.Send(h, body)
}

// Frame reads one frame, waiting at most five seconds.
func (c *Client) Frame() []byte {
	c.t.Helper()
	_ = c.Conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, err := jute.ReadFrame(c.Reader, nil, 1<<24)
	if err != nil {
		c.t.Fatalf("read frame: %v", err)
	}
	return b
}

// Reply reads a reply, decoding its body into body when its error is
// OK and it is no notification.
func (c *Client) Reply(body jute.Record) jute.ReplyHeader {
	c.t.Helper()
	r := jute.NewReader(c.Frame())
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

// Connect performs the handshake of a new session (timeout 3 s).
func (c *Client) Connect(readOnlyByte bool) jute.ConnectResponse {
	c.t.Helper()
	return c.connect(3000, readOnlyByte)
}

// ConnectFor opens a new session asking for a timeout of ms milliseconds
// (without the read-only byte), for a client that must outlive rawclient's
// usual 3 s without pinging; the server must allow that much.
func (c *Client) ConnectFor(ms int32) jute.ConnectResponse {
	c.t.Helper()
	return c.connect(ms, false)
}

func (c *Client) connect(ms int32, readOnlyByte bool) jute.ConnectResponse {
	c.t.Helper()
	c.Send(&jute.ConnectRequest{TimeOut: ms, Passwd: make([]byte, 16), HasReadOnly: readOnlyByte})
	var resp jute.ConnectResponse
	if err := jute.Unmarshal(c.Frame(), &resp); err != nil {
		c.t.Fatal(err)
	}
	return resp
}

// ExpectClosed waits (at most five seconds) for the server to close the
// connection, whatever it sends before.
func (c *Client) ExpectClosed() {
	c.t.Helper()
	_ = c.Conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	var ne net.Error
	if _, err := io.ReadAll(c.Reader); errors.As(err, &ne) && ne.Timeout() {
		c.t.Fatal("connection still open")
	}
}

// ReadAll reads until the server closes the connection (a four-letter
// word's answer) and returns what it sent.
func (c *Client) ReadAll() string {
	c.t.Helper()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(c.Reader)
	return buf.String()
}

// Word sends a four-letter word to addr on a new connection and returns
// the whole answer.
func Word(t testing.TB, addr, word string) string {
	t.Helper()
	c := Dial(t, addr)
	c.SendRaw([]byte(word))
	return c.ReadAll()
}
