package bench

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
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
	resp, err := handshake(nc, o.timeout)
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
	go c.readLoop(bufio.NewReaderSize(nc, 16<<10))
	go c.writeLoop()
	return c
}

// handshake sends a ConnectRequest for a new session and reads the answer.
func handshake(nc net.Conn, timeout time.Duration) (*jute.ConnectResponse, error) {
	var w jute.Writer
	at := jute.BeginFrame(&w)
	req := jute.ConnectRequest{
		TimeOut:     int32(timeout / time.Millisecond),
		Passwd:      make([]byte, 16),
		HasReadOnly: true,
	}
	req.Encode(&w)
	jute.EndFrame(&w, at)
	if _, err := nc.Write(w.Buf); err != nil {
		return nil, fmt.Errorf("send ConnectRequest: %w", err)
	}
	frame, err := jute.ReadFrame(nc, nil, 1<<10)
	if err != nil {
		return nil, fmt.Errorf("read ConnectResponse: %w", err)
	}
	var resp jute.ConnectResponse
	if err := resp.Decode(jute.NewReader(frame)); err != nil {
		return nil, fmt.Errorf("%w: ConnectResponse: %w", ErrProtocol, err)
	}
	if resp.TimeOut <= 0 || resp.SessionID == 0 {
		return nil, fmt.Errorf("server refused the session: %w", jute.ErrSessionExpired)
	}
	return &resp, nil
}

// SessionID is the server-assigned session id.
func (c *conn) SessionID() int64 { return c.sessionID }

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
	case c.slots <- struct{}{}:
	case <-c.dying:
		return 0, fmt.Errorf("%w: %w", ErrClosed, c.err)
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

// GetData sends getData(path, watch).
func (c *conn) GetData(path string, watch bool, class opClass, h replyHandler, arg int64) error {
	at, err := c.begin(jute.OpGetData, class, h, arg)
	if err != nil {
		return err
	}
	c.wbuf.String(path)
	c.wbuf.Bool(watch)
	c.end(at)
	return nil
}

// Exists sends exists(path, watch).
func (c *conn) Exists(path string, watch bool, class opClass, h replyHandler, arg int64) error {
	at, err := c.begin(jute.OpExists, class, h, arg)
	if err != nil {
		return err
	}
	c.wbuf.String(path)
	c.wbuf.Bool(watch)
	c.end(at)
	return nil
}

// SetData sends setData(path, data, version).
func (c *conn) SetData(path string, data []byte, version int32, class opClass, h replyHandler, arg int64) error {
	at, err := c.begin(jute.OpSetData, class, h, arg)
	if err != nil {
		return err
	}
	c.wbuf.String(path)
	c.wbuf.Buffer(data)
	c.wbuf.Int(version)
	c.end(at)
	return nil
}

// openACL is world:anyone with every permission.
var openACL = []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}

// Create sends create(path, data, open ACL, flags).
func (c *conn) Create(path string, data []byte, flags int32, class opClass, h replyHandler, arg int64) error {
	at, err := c.begin(jute.OpCreate, class, h, arg)
	if err != nil {
		return err
	}
	c.wbuf.String(path)
	c.wbuf.Buffer(data)
	jute.WriteACLs(&c.wbuf, openACL)
	c.wbuf.Int(flags)
	c.end(at)
	return nil
}

// Delete sends delete(path, version).
func (c *conn) Delete(path string, version int32, class opClass, h replyHandler, arg int64) error {
	at, err := c.begin(jute.OpDelete, class, h, arg)
	if err != nil {
		return err
	}
	c.wbuf.String(path)
	c.wbuf.Int(version)
	c.end(at)
	return nil
}

// GetAllChildrenNumber sends getAllChildrenNumber(path) (ZooKeeper 3.6+).
func (c *conn) GetAllChildrenNumber(path string, class opClass, h replyHandler, arg int64) error {
	at, err := c.begin(jute.OpGetAllChildrenNumber, class, h, arg)
	if err != nil {
		return err
	}
	c.wbuf.String(path)
	c.end(at)
	return nil
}

// GetChildren sends getChildren(path, watch=false).
func (c *conn) GetChildren(path string, class opClass, h replyHandler, arg int64) error {
	at, err := c.begin(jute.OpGetChildren, class, h, arg)
	if err != nil {
		return err
	}
	c.wbuf.String(path)
	c.wbuf.Bool(false)
	c.end(at)
	return nil
}

// writeLoop writes queued frames in batches and sends a ping whenever the
// connection has been idle for a third of the session timeout.
func (c *conn) writeLoop() {
	pingEvery := c.timeout / 3
	if pingEvery <= 0 {
		pingEvery = time.Second
	}
	tick := time.NewTicker(pingEvery / 2)
	defer tick.Stop()
	var out []byte
	for {
		select {
		case <-c.kick:
		case <-tick.C:
			if time.Duration(nowNanos()-c.lastSend.Load()) < pingEvery {
				continue
			}
			c.wmu.Lock()
			if !c.closing.Load() {
				at := jute.BeginFrame(&c.wbuf)
				c.wbuf.Int(jute.XidPing)
				c.wbuf.Int(int32(jute.OpPing))
				jute.EndFrame(&c.wbuf, at)
			}
			c.wmu.Unlock()
		case <-c.dying:
			return
		}
		c.wmu.Lock()
		out, c.wbuf.Buf = c.wbuf.Buf, out[:0]
		c.wmu.Unlock()
		if len(out) == 0 {
			continue
		}
		c.lastSend.Store(nowNanos())
		if _, err := c.nc.Write(out); err != nil {
			c.nc.Close() // the reader sees the failure and cleans up
			return
		}
	}
}

// readLoop reads replies, matches each to the oldest pending request and
// dispatches notifications, until the connection fails or the session closes.
func (c *conn) readLoop(br *bufio.Reader) {
	err := c.readReplies(br)
	c.stop(err)
}

// frameReader reads length-prefixed frames like jute.ReadFrame, but keeps
// the length prefix and the payload buffer across calls so that reading a
// reply allocates nothing.
type frameReader struct {
	br  *bufio.Reader
	hdr [4]byte
	buf []byte
}

// next returns the next frame's payload, valid until the following call.
func (f *frameReader) next() ([]byte, error) {
	if _, err := io.ReadFull(f.br, f.hdr[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(f.hdr[:]))
	if n < 0 || n > maxReply {
		return nil, fmt.Errorf("%w: length %d, limit %d", jute.ErrFrameTooLarge, n, maxReply)
	}
	if cap(f.buf) < int(n) {
		f.buf = make([]byte, n)
	}
	f.buf = f.buf[:n]
	if _, err := io.ReadFull(f.br, f.buf); err != nil {
		return nil, fmt.Errorf("short frame: %w", err)
	}
	return f.buf, nil
}

func (c *conn) readReplies(br *bufio.Reader) error {
	fr := &frameReader{br: br}
	var hdr jute.ReplyHeader
	var ev jute.WatcherEvent
	r := jute.NewReader(nil)
	// Like ZooKeeper's client, give up after 2/3 of the session timeout
	// without a byte from the server (pings keep an idle session talking).
	// The deadline is pushed forward at most every readTimeout/8.
	readTimeout := c.timeout * 2 / 3
	_ = c.nc.SetReadDeadline(time.Now().Add(readTimeout))
	armed := nowNanos()
	at := armed // when the last frame arrived
	for {
		if time.Duration(at-armed) > readTimeout/8 {
			_ = c.nc.SetReadDeadline(time.Now().Add(readTimeout))
			armed = at
		}
		frame, err := fr.next()
		if err != nil {
			if c.closing.Load() {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return fmt.Errorf("nothing from the server for %v: %w", readTimeout, err)
			}
			return fmt.Errorf("read reply: %w", err)
		}
		at = nowNanos()
		r.Reset(frame)
		if err := hdr.Decode(r); err != nil {
			return fmt.Errorf("%w: reply header: %w", ErrProtocol, err)
		}
		switch hdr.Xid {
		case jute.XidNotification:
			if err := ev.Decode(r); err != nil {
				return fmt.Errorf("%w: watch event: %w", ErrProtocol, err)
			}
			if c.events != nil {
				c.events.handleEvent(c, &ev, at)
			}
			continue
		case jute.XidPing, jute.XidAuth, jute.XidSetWatches:
			continue
		}
		if err := c.match(&hdr, frame[jute.ReplyHeaderSize:], at); err != nil {
			return err
		}
	}
}

// match pairs a reply with the oldest pending request. ZooKeeper answers a
// connection's requests in order, so anything else is a protocol violation.
func (c *conn) match(hdr *jute.ReplyHeader, body []byte, at int64) error {
	p := &c.cur
	select {
	case *p = <-c.pending:
	default:
		return fmt.Errorf("%w: reply xid %d with no request outstanding", ErrProtocol, hdr.Xid)
	}
	<-c.slots
	if p.xid != hdr.Xid {
		c.fail(p)
		return fmt.Errorf("%w: reply xid %d out of order, expected %d (op %d)", ErrProtocol, hdr.Xid, p.xid, p.op)
	}
	if c.rec != nil {
		c.rec.done(p.class, p.start, at, hdr.Err)
	}
	if p.h != nil {
		p.h.handleReply(p, hdr.Err, body)
	}
	*p = pendingOp{} // drop the handler reference
	return nil
}

// fail reports a request that will never be answered.
func (c *conn) fail(p *pendingOp) {
	if c.rec != nil && p.op != jute.OpCloseSession {
		c.rec.failIn(p.class, p.start, jute.ErrConnectionLoss, "")
	}
	if p.h != nil {
		p.h.handleReply(p, jute.ErrConnectionLoss, nil)
	}
}

// stop shuts the connection down and fails every request still pending.
func (c *conn) stop(err error) {
	if err == nil {
		err = ErrClosed
	}
	c.err = err
	close(c.dying)
	c.nc.Close()
	c.wmu.Lock()
	c.closed = true
	c.wmu.Unlock()
	for {
		select {
		case p := <-c.pending:
			<-c.slots
			c.fail(&p)
		default:
			close(c.done)
			if c.onStop != nil {
				c.onStop(c)
			}
			return
		}
	}
}

// closeWaiter is the reply handler of closeSession.
type closeWaiter struct{ ch chan jute.ErrCode }

func (w closeWaiter) handleReply(_ *pendingOp, err jute.ErrCode, _ []byte) {
	select {
	case w.ch <- err:
	default:
	}
}

// Close ends the session with closeSession (bounded by wait) and closes the
// connection. It returns the server's answer to closeSession.
func (c *conn) Close(wait time.Duration, class opClass) error {
	w := closeWaiter{ch: make(chan jute.ErrCode, 1)}
	at, err := c.begin(jute.OpCloseSession, class, w, 0)
	if err != nil {
		c.nc.Close()
		<-c.done
		return err
	}
	c.closing.Store(true)
	c.end(at)
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case code := <-w.ch:
		c.nc.Close()
		<-c.done
		if code != jute.OK {
			return fmt.Errorf("closeSession: %w", code)
		}
		return nil
	case <-t.C:
		c.nc.Close()
		<-c.done
		return fmt.Errorf("closeSession: no reply within %v: %w", wait, jute.ErrOperationTimeout)
	}
}

// Abort closes the connection without closing the session.
func (c *conn) Abort() {
	c.closing.Store(true)
	c.nc.Close()
	<-c.done
}

// barrier is a reply handler that signals when its request is answered.
type barrier struct{ ch chan jute.ErrCode }

func (b barrier) handleReply(_ *pendingOp, err jute.ErrCode, _ []byte) { b.ch <- err }

// Barrier waits until every request issued before it has been answered (a
// cheap exists("/") rides behind them: replies come in order).
func (c *conn) Barrier(ctx context.Context) error {
	b := barrier{ch: make(chan jute.ErrCode, 1)}
	if err := c.Exists("/", false, classNone, b, 0); err != nil {
		return err
	}
	select {
	case code := <-b.ch:
		if code != jute.OK {
			if e := c.Err(); e != nil {
				return fmt.Errorf("barrier: %w", e)
			}
			return fmt.Errorf("barrier: %w", code)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
