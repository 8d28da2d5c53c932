package bench

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/zkraft/zkraft/jute"
)

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

// readReplies is the reader goroutine's loop; it returns why it stopped (nil
// after closeSession).
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
	if hdr.Zxid > c.lastZxid.Load() { // only the reader writes it
		c.lastZxid.Store(hdr.Zxid)
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
