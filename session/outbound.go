package session

import (
	"net"
	"sync"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// maxOutbound is how many unsent bytes a connection may accumulate before
// it is judged unable to drain and closed; other sessions are never held
// up by it. Its reader pauses long before (MaxUnsentPerConn), so only a
// burst the reader cannot stop (reads parked behind a write, a storm of
// watch notifications) reaches it.
const maxOutbound = 64 << 20

// outbound is a connection's ordered send buffer. Producers (the reader,
// the FSM, watch fan-out) append complete frames under mu; the writer
// goroutine swaps the buffer out and writes it in one call.
//
// The bytes queued and those the writer has taken but not yet written are
// the connection's backlog, counted in budget (the Server's, shared by
// every connection; nil in unit tests): the reader pauses while it is too
// large (backpressure.go).
type outbound struct {
	mu       sync.Mutex
	w        jute.Writer // pending bytes
	spare    []byte
	inflight int  // bytes the writer took and has not finished writing
	closing  bool // close once everything queued so far is written
	dead     bool // stop now
	wake     chan struct{}
	// drained, when not nil, is closed at the writer's next progress (and
	// when the connection dies): a paused reader waits on it.
	drained chan struct{}
	budget  *backlog
}

func newOutbound(budget *backlog) *outbound {
	return &outbound{wake: make(chan struct{}, 1), budget: budget}
}

// unsentLocked is the connection's backlog.
func (o *outbound) unsentLocked() int64 { return int64(len(o.w.Buf) + o.inflight) }

// queuedLocked accounts n bytes just appended to a backlog of before.
func (o *outbound) queuedLocked(before int64, n int) {
	if o.budget == nil || n == 0 {
		return
	}
	o.budget.total.Add(int64(n))
	if before == 0 {
		o.budget.conns.Add(1)
	}
}

// releasedLocked accounts n bytes written (or dropped) that leave a
// backlog of after.
func (o *outbound) releasedLocked(n int, after int64) {
	if o.budget == nil || n == 0 {
		return
	}
	o.budget.total.Add(-int64(n))
	if after == 0 {
		o.budget.conns.Add(-1)
	}
}

// wakeReaderLocked lets a paused reader look at its backlog again.
func (o *outbound) wakeReaderLocked() {
	if o.drained != nil {
		close(o.drained)
		o.drained = nil
	}
}

func (o *outbound) signal() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// reply queues a reply header and optional body. It reports false if the
// connection is closing or over its limit (then it is marked dead).
func (o *outbound) reply(xid int32, zxid int64, code jute.ErrCode, body jute.Record) bool {
	if body == nil {
		return o.replyWith(xid, zxid, code, nil)
	}
	return o.replyWith(xid, zxid, code, body.Encode)
}

// replyWith is reply with the body written by encode (called only for OK
// and never kept), so a hot path can pass a concrete record's Encode
// without the record escaping to the heap.
func (o *outbound) replyWith(xid int32, zxid int64, code jute.ErrCode, encode func(*jute.Writer)) bool {
	if code != jute.OK {
		encode = nil
	}
	return o.frame(xid, zxid, code, encode)
}

// frame queues a reply header and the body encode writes (none if nil).
func (o *outbound) frame(xid int32, zxid int64, code jute.ErrCode, encode func(*jute.Writer)) bool {
	o.mu.Lock()
	if o.dead || o.closing {
		o.mu.Unlock()
		return false
	}
	before, capBefore := o.unsentLocked(), cap(o.w.Buf)
	at := jute.BeginFrame(&o.w)
	h := jute.ReplyHeader{Xid: xid, Zxid: zxid, Err: code}
	h.Encode(&o.w)
	if encode != nil {
		encode(&o.w)
	}
	jute.EndFrame(&o.w, at)
	o.queuedLocked(before, len(o.w.Buf)-at)
	if c := cap(o.w.Buf); c != capBefore && c > retainBufferSize && o.budget != nil {
		o.budget.noteAllocated(c) // a large buffer, garbage once written
	}
	ok := o.checkLimitLocked()
	o.mu.Unlock()
	o.signal()
	return ok
}

// replyErrorWithBody queues an error reply that still carries a body, as
// ZooKeeper's failed SASL answer does (a client mid-SASL reads every reply
// as a SASL token).
func (o *outbound) replyErrorWithBody(xid int32, zxid int64, code jute.ErrCode, body jute.Record) bool {
	return o.frame(xid, zxid, code, body.Encode)
}

// record queues a frame holding a record without a reply header
// (ConnectResponse).
func (o *outbound) record(rec jute.Record) {
	o.mu.Lock()
	if o.dead {
		o.mu.Unlock()
		return
	}
	before := o.unsentLocked()
	at := jute.BeginFrame(&o.w)
	rec.Encode(&o.w)
	jute.EndFrame(&o.w, at)
	o.queuedLocked(before, len(o.w.Buf)-at)
	o.mu.Unlock()
	o.signal()
}

// raw queues unframed bytes (four-letter word output).
func (o *outbound) raw(b []byte) {
	o.mu.Lock()
	if o.dead {
		o.mu.Unlock()
		return
	}
	o.queuedLocked(o.unsentLocked(), len(b))
	o.w.Raw(b)
	o.mu.Unlock()
	o.signal()
}

func (o *outbound) checkLimitLocked() bool {
	if o.w.Len() > maxOutbound {
		o.dead = true
		return false
	}
	return true
}

// closeAfterFlush makes the writer close the socket once everything queued
// so far has been written; later frames are dropped.
func (o *outbound) closeAfterFlush() {
	o.mu.Lock()
	o.closing = true
	o.mu.Unlock()
	o.signal()
}

// isDead reports whether the connection is being torn down.
func (o *outbound) isDead() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.dead || o.closing
}

// kill makes the writer close the socket without flushing.
func (o *outbound) kill() {
	o.mu.Lock()
	o.dead = true
	o.wakeReaderLocked()
	o.mu.Unlock()
	o.signal()
}

// writeLoop is the connection's writer goroutine. It returns when the
// connection is closed; it then closes nc, which also stops the reader.
//
// A write that blocks for longer than about timeout (the client stopped
// reading) closes the connection. Moving a socket's deadline updates a
// runtime timer, so it is moved only once less than 5/6 of timeout is
// left: every write still gets at least that long.
func (o *outbound) writeLoop(nc net.Conn, done <-chan struct{}, timeout time.Duration) {
	defer nc.Close()
	defer o.release()
	var deadline time.Time // the write deadline last set on nc
	for {
		select {
		case <-o.wake:
		case <-done:
			return
		}
		o.mu.Lock()
		buf, dead, closing := o.w.Buf, o.dead, o.closing
		o.w.Buf, o.spare = o.spare[:0], nil
		o.inflight = len(buf)
		o.mu.Unlock()
		if dead {
			return
		}
		if len(buf) > 0 {
			if now := time.Now(); deadline.Sub(now) < timeout*5/6 {
				deadline = now.Add(timeout)
				_ = nc.SetWriteDeadline(deadline)
			}
			if _, err := nc.Write(buf); err != nil {
				o.kill()
				return
			}
		}
		o.mu.Lock()
		o.inflight = 0
		o.releasedLocked(len(buf), o.unsentLocked())
		o.wakeReaderLocked()
		if cap(buf) <= retainBufferSize && !closing {
			o.spare = buf[:0]
		}
		o.mu.Unlock()
		if closing {
			return
		}
	}
}

// release drops everything still queued when the writer stops, so that
// neither the memory nor its share of the Server's backlog outlives the
// connection, and wakes a paused reader.
func (o *outbound) release() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.dead = true
	o.releasedLocked(int(o.unsentLocked()), 0)
	if o.budget != nil {
		o.budget.connClosed()
	}
	o.w.Buf, o.spare, o.inflight = nil, nil, 0
	o.wakeReaderLocked()
}
