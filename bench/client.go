package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// epoch is the origin of the monotonic nanosecond clock used for latencies.
var epoch = time.Now()

// nowNanos is nanoseconds since epoch (monotonic).
func nowNanos() int64 { return int64(time.Since(epoch)) }

// maxReply is the largest reply frame accepted. It is above ZooKeeper's
// default jute.maxbuffer because getChildren of a large benchmark directory
// (cleanup of --keys 100000) can exceed 1 MiB.
const maxReply = 64 << 20

// ErrClosed is returned by requests on a connection whose reader has stopped
// (server closed it, protocol error, or Close).
var ErrClosed = errors.New("bench: connection closed")

// ErrProtocol wraps every violation of the protocol by the server: a reply
// out of order, a reply with nothing outstanding, a malformed frame.
var ErrProtocol = errors.New("bench: protocol violation")

// replyHandler is told about a reply. body is only valid during the call.
// err is the ReplyHeader error, or ErrConnectionLoss when the connection died
// before the reply arrived. Handlers run on the reader goroutine and must not
// block on the same connection's in-flight slots.
type replyHandler interface {
	handleReply(p *pendingOp, err jute.ErrCode, body []byte)
}

// eventHandler is told about watch notifications, on the reader goroutine.
type eventHandler interface {
	handleEvent(c *conn, ev *jute.WatcherEvent, at int64)
}

// pendingOp is one request awaiting its reply.
type pendingOp struct {
	xid   int32
	op    jute.Op
	class opClass
	start int64 // nowNanos when queued
	h     replyHandler
	arg   int64 // handler's own tag
}

// conn is one ZooKeeper session over one TCP connection, with pipelined
// requests. Requests may be issued from several goroutines; each issuing call
// blocks while the in-flight depth is reached.
type conn struct {
	nc        net.Conn
	sessionID int64
	passwd    []byte // the session's password, to resume it on another connection
	timeout   time.Duration
	rec       *recorder
	events    eventHandler
	onStop    func(*conn)

	slots   chan struct{}  // one token per request in flight: the depth bound
	pending chan pendingOp // FIFO of requests awaiting replies; pushed under wmu
	kick    chan struct{}  // cap 1: wakes the writer
	dying   chan struct{}  // closed when the reader stops
	done    chan struct{}  // closed after the reader has failed every pending request
	err     error          // why the reader stopped; set before dying is closed

	wmu    sync.Mutex
	wbuf   jute.Writer // guarded by wmu: encoded frames not yet written
	xid    int32       // guarded by wmu
	closed bool        // guarded by wmu: no more requests accepted

	cur pendingOp // reader-owned: the request being matched (kept here so it does not escape per reply)

	lastSend atomic.Int64 // nowNanos of the last write, for pings
	lastZxid atomic.Int64 // the largest zxid of a reply, as a client keeps it to resume the session
	closing  atomic.Bool  // closeSession sent: EOF afterwards is expected
}

// dialOptions configure a session.
type dialOptions struct {
	addr     string
	timeout  time.Duration // requested session timeout
	dialWait time.Duration // TCP connect + handshake limit
	inflight int
	rec      *recorder
	events   eventHandler
	onStop   func(*conn) // called once the connection has stopped
	resume   *resumeFrom // the session to resume; nil for a new one
	readBuf  int         // the reader's buffer; 0: 16 KiB (sessions held by the thousand take less)
	local    net.IP      // the source address; nil: the system's choice
}

// resumeFrom is what a client presents to resume its session on another
// connection: the id and password the server gave it and the last zxid
// it saw (a member behind that zxid must refuse it).
type resumeFrom struct {
	id       int64
	passwd   []byte
	lastZxid int64
}

// dial opens a TCP connection, performs the ConnectRequest handshake and
// starts the reader and writer goroutines.
func dial(ctx context.Context, o dialOptions) (*conn, error) {
	if o.inflight < 1 {
		o.inflight = 1
	}
	ctx, cancel := context.WithTimeout(ctx, o.dialWait)
	defer cancel()
	var d net.Dialer
	if o.local != nil {
		// The port is chosen at connect, for the whole 4-tuple, not at
		// bind: one source address per ephemeral port range, so that
		// tens of thousands of loopback connections do not leave the
		// kernel searching a full range on every connect.
		d.LocalAddr, d.Control = &net.TCPAddr{IP: o.local}, bindAddressNoPort
	}
	nc, err := d.DialContext(ctx, "tcp", o.addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", o.addr, err)
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = nc.SetDeadline(dl)
	}
	resp, err := handshake(nc, o.timeout, o.resume)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("handshake with %s: %w", o.addr, err)
	}
	_ = nc.SetDeadline(time.Time{})
	return start(nc, resp, o), nil
}

// start wraps an established session's connection and starts its reader
// and writer goroutines.
func start(nc net.Conn, resp *jute.ConnectResponse, o dialOptions) *conn {
	c := &conn{
		nc:        nc,
		sessionID: resp.SessionID,
		passwd:    resp.Passwd,
		timeout:   time.Duration(resp.TimeOut) * time.Millisecond,
		rec:       o.rec,
		events:    o.events,
		onStop:    o.onStop,
		slots:     make(chan struct{}, o.inflight),
		pending:   make(chan pendingOp, o.inflight),
		kick:      make(chan struct{}, 1),
		dying:     make(chan struct{}),
		done:      make(chan struct{}),
	}
	c.lastSend.Store(nowNanos())
	if o.resume != nil {
		c.lastZxid.Store(o.resume.lastZxid)
	}
	readBuf := o.readBuf
	if readBuf <= 0 {
		readBuf = 16 << 10
	}
	go c.readLoop(bufio.NewReaderSize(nc, readBuf))
	go c.writeLoop()
	return c
}

// handshake sends a ConnectRequest, for a new session or to resume one
// (from not nil), and reads the answer.
func handshake(nc net.Conn, timeout time.Duration, from *resumeFrom) (*jute.ConnectResponse, error) {
	var w jute.Writer
	appendConnectRequest(&w, timeout, from)
	if _, err := nc.Write(w.Buf); err != nil {
		return nil, fmt.Errorf("send ConnectRequest: %w", err)
	}
	frame, err := jute.ReadFrame(nc, nil, 1<<10)
	if err != nil {
		return nil, fmt.Errorf("read ConnectResponse: %w", err)
	}
	var resp jute.ConnectResponse
	if err := decodeConnectResponse(&resp, jute.NewReader(frame)); err != nil {
		return nil, err
	}
	return &resp, nil
}

// zeroPasswd is a new session's password field.
var zeroPasswd [16]byte

// appendConnectRequest appends the frame asking for a new session, or to
// resume from's.
func appendConnectRequest(w *jute.Writer, timeout time.Duration, from *resumeFrom) {
	at := jute.BeginFrame(w)
	req := jute.ConnectRequest{TimeOut: int32(timeout / time.Millisecond), Passwd: zeroPasswd[:], HasReadOnly: true}
	if from != nil {
		req.SessionID, req.Passwd, req.LastZxidSeen = from.id, from.passwd, from.lastZxid
	}
	req.Encode(w)
	jute.EndFrame(w, at)
}

// decodeConnectResponse reads the answer to a ConnectRequest from r; a
// session the server refused (no timeout or id) is ErrSessionExpired.
func decodeConnectResponse(resp *jute.ConnectResponse, r *jute.Reader) error {
	if err := resp.Decode(r); err != nil {
		return fmt.Errorf("%w: ConnectResponse: %w", ErrProtocol, err)
	}
	if resp.TimeOut <= 0 || resp.SessionID == 0 {
		return fmt.Errorf("server refused the session: %w", jute.ErrSessionExpired)
	}
	return nil
}

// SessionID is the server-assigned session id.
func (c *conn) SessionID() int64 { return c.sessionID }

// resumeFrom is what resumes c's session on another connection.
func (c *conn) resumeFrom() *resumeFrom {
	return &resumeFrom{id: c.sessionID, passwd: c.passwd, lastZxid: c.lastZxid.Load()}
}

// inFlight is how many of c's requests await their replies.
func (c *conn) inFlight() int { return len(c.slots) }

// Err is why the connection stopped, or nil while it runs.
func (c *conn) Err() error {
	select {
	case <-c.dying:
		return c.err
	default:
		return nil
	}
}

// begin reserves an in-flight slot, assigns an xid, queues the pending entry
// and writes the request header. On success wmu is held and the caller
// appends the body to c.wbuf and calls end.
func (c *conn) begin(op jute.Op, class opClass, h replyHandler, arg int64) (frameAt int, err error) {
	select {
	case c.slots <- struct{}{}: // fast path: a free slot, no selectgo
	default:
		select {
		case c.slots <- struct{}{}:
		case <-c.dying:
			return 0, fmt.Errorf("%w: %w", ErrClosed, c.err)
		}
	}
	c.wmu.Lock()
	if c.closed {
		c.wmu.Unlock()
		<-c.slots
		return 0, fmt.Errorf("%w: %w", ErrClosed, c.err)
	}
	c.xid++
	if c.xid <= 0 { // never collide with the reserved negative xids
		c.xid = 1
	}
	c.pending <- pendingOp{xid: c.xid, op: op, class: class, start: nowNanos(), h: h, arg: arg}
	at := jute.BeginFrame(&c.wbuf)
	c.wbuf.Int(c.xid)
	c.wbuf.Int(int32(op))
	return at, nil
}

// end finishes the frame begun at at, releases wmu and wakes the writer.
func (c *conn) end(at int) {
	jute.EndFrame(&c.wbuf, at)
	c.wmu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default:
	}
}
