package e2e

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// rawWait bounds every read of a raw client.
const rawWait = 5 * time.Second

// rawConn is a hand-driven client connection: it writes Jute frames and
// reads replies byte for byte, with no client library in between.
type rawConn struct {
	t    testing.TB
	conn net.Conn
	kind string // server kind, for messages
	xid  int32

	// Session fields from the handshake.
	SessionID int64
	Passwd    []byte
	Timeout   int32

	// Notifications received while waiting for replies, in arrival order.
	Events []rawEvent
}

// rawEvent is one notification (xid -1).
type rawEvent struct {
	Zxid int64
	Type jute.EventType
	Path string
}

// rawReply is one reply frame.
type rawReply struct {
	Hdr  jute.ReplyHeader
	Body []byte
}

// dialRaw opens a TCP connection to s without a handshake.
func dialRaw(t testing.TB, s *Server) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", s.Addr, 2*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", s.Addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{t: t, conn: c, kind: s.Kind}
}

// newRawSession dials s and opens a new session (readOnly byte sent).
func newRawSession(t testing.TB, s *Server, timeoutMs int32) *rawConn {
	t.Helper()
	c := dialRaw(t, s)
	resp := c.handshake(&jute.ConnectRequest{TimeOut: timeoutMs, Passwd: make([]byte, 16), HasReadOnly: true})
	if resp.SessionID == 0 {
		t.Fatalf("handshake refused: %+v", resp)
	}
	return c
}

// writeRaw writes b as is.
func (c *rawConn) writeRaw(b []byte) error {
	c.conn.SetWriteDeadline(time.Now().Add(rawWait))
	_, err := c.conn.Write(b)
	return err
}

// readFrame reads one frame (payload only).
func (c *rawConn) readFrame() ([]byte, error) {
	c.conn.SetReadDeadline(time.Now().Add(rawWait))
	return jute.ReadFrame(c.conn, nil, 4*jute.DefaultMaxBuffer)
}

// handshake sends req and decodes the ConnectResponse; the session fields
// are stored on c when the server accepts.
func (c *rawConn) handshake(req *jute.ConnectRequest) *jute.ConnectResponse {
	c.t.Helper()
	resp, _, err := c.tryHandshake(req)
	if err != nil {
		c.t.Fatalf("handshake: %v", err)
	}
	return resp
}

// tryHandshake is handshake returning errors and the raw reply payload.
func (c *rawConn) tryHandshake(req *jute.ConnectRequest) (*jute.ConnectResponse, []byte, error) {
	if err := c.writeRaw(frame(jute.Marshal(req))); err != nil {
		return nil, nil, err
	}
	body, err := c.readFrame()
	if err != nil {
		return nil, nil, err
	}
	var resp jute.ConnectResponse
	if err := jute.Unmarshal(body, &resp); err != nil {
		return nil, body, err
	}
	if resp.SessionID != 0 {
		c.SessionID, c.Passwd, c.Timeout = resp.SessionID, resp.Passwd, resp.TimeOut
	}
	return &resp, body, nil
}

// encodeRequest returns the frame of one request.
func encodeRequest(xid int32, op jute.Op, body jute.Record) []byte {
	var w jute.Writer
	at := jute.BeginFrame(&w)
	(&jute.RequestHeader{Xid: xid, Type: op}).Encode(&w)
	if body != nil {
		body.Encode(&w)
	}
	jute.EndFrame(&w, at)
	return w.Buf
}

// nextXid returns the next request xid of c.
func (c *rawConn) nextXid() int32 {
	c.xid++
	return c.xid
}

// send writes one request with a fresh xid and returns the xid.
func (c *rawConn) send(op jute.Op, body jute.Record) int32 {
	c.t.Helper()
	xid := c.nextXid()
	if err := c.writeRaw(encodeRequest(xid, op, body)); err != nil {
		c.t.Fatalf("send op %d: %v", op, err)
	}
	return xid
}

// readAny reads one frame and splits it into header and body.
func (c *rawConn) readAny() (rawReply, error) {
	b, err := c.readFrame()
	if err != nil {
		return rawReply{}, err
	}
	var r rawReply
	rd := jute.NewReader(b)
	if err := r.Hdr.Decode(rd); err != nil {
		return rawReply{}, err
	}
	r.Body = b[jute.ReplyHeaderSize:]
	return r, nil
}

// recv reads frames until a reply that is not a notification; notifications
// are appended to c.Events.
func (c *rawConn) recv() rawReply {
	c.t.Helper()
	for {
		r, err := c.readAny()
		if err != nil {
			c.t.Fatalf("%s: session %#x: read reply: %v", c.kind, c.SessionID, err)
		}
		if r.Hdr.Xid != jute.XidNotification {
			return r
		}
		var ev jute.WatcherEvent
		if err := jute.Unmarshal(r.Body, &ev); err != nil {
			c.t.Fatalf("decode notification: %v", err)
		}
		c.Events = append(c.Events, rawEvent{Zxid: r.Hdr.Zxid, Type: ev.Type, Path: ev.Path})
	}
}

// call sends one request, reads its reply (checking the xid), decodes the
// body into resp when the reply is OK, and returns the reply header.
func (c *rawConn) call(op jute.Op, body, resp jute.Record) jute.ReplyHeader {
	c.t.Helper()
	xid := c.send(op, body)
	r := c.recv()
	if r.Hdr.Xid != xid {
		c.t.Fatalf("op %d: reply xid %d, want %d", op, r.Hdr.Xid, xid)
	}
	if r.Hdr.Err == jute.OK && resp != nil {
		if err := jute.Unmarshal(r.Body, resp); err != nil {
			c.t.Fatalf("op %d: decode reply %x: %v", op, r.Body, err)
		}
	}
	if r.Hdr.Err != jute.OK && len(r.Body) != 0 {
		c.t.Errorf("op %d: error reply %d carries a %d-byte body", op, r.Hdr.Err, len(r.Body))
	}
	return r.Hdr
}

// callErr is call returning only the error code.
func (c *rawConn) callErr(op jute.Op, body jute.Record) jute.ErrCode {
	c.t.Helper()
	return c.call(op, body, nil).Err
}

// ping sends a ping and checks the reply, returning the reply's zxid.
func (c *rawConn) ping() int64 {
	c.t.Helper()
	if err := c.writeRaw(encodeRequest(jute.XidPing, jute.OpPing, nil)); err != nil {
		c.t.Fatalf("ping: %v", err)
	}
	r := c.recv()
	if r.Hdr.Xid != jute.XidPing || r.Hdr.Err != jute.OK || len(r.Body) != 0 {
		c.t.Fatalf("ping reply = %+v body %x", r.Hdr, r.Body)
	}
	return r.Hdr.Zxid
}

// closeSession sends closeSession and waits for its reply and the close.
func (c *rawConn) closeSession() {
	c.t.Helper()
	h := c.call(jute.OpCloseSession, nil, nil)
	if h.Err != jute.OK {
		c.t.Fatalf("closeSession: err %d", h.Err)
	}
	c.expectClosed()
}

// expectClosed reads until the server closes the connection and returns
// the replies read before that. A connection still open after rawWait fails t.
func (c *rawConn) expectClosed() []rawReply {
	c.t.Helper()
	var got []rawReply
	for {
		r, err := c.readAny()
		if err == nil {
			got = append(got, r)
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			c.t.Fatalf("connection still open after %v (read %d frames)", rawWait, len(got))
		}
		if !errors.Is(err, io.EOF) && !isNetError(err) {
			c.t.Logf("connection ended with %v", err)
		}
		return got
	}
}

// isNetError reports a network error such as a reset by the peer.
func isNetError(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe)
}
