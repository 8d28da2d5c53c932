package session

import (
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/zkraft/zkraft/internal/base/stagetrace"
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
	mu    sync.Mutex
	w     jute.Writer // pending bytes
	spare []byte
	// lazy are the frames among the pending bytes whose bodies the writer
	// encodes when it reaches them (lazy.go), in order; lazyBytes is what
	// the backlog counts for them.
	lazy      []lazyFrame
	lazySpare []lazyFrame
	lazyBytes int
	// scratch is the writer's buffer for encoding a lazy frame.
	scratch  jute.Writer
	inflight int  // bytes the writer took and has not finished writing
	closing  bool // close once everything queued so far is written
	dead     bool // stop now
	// The writer: nc, once start gave it; writing while a writer
	// goroutine runs; finished once the connection is done.
	nc       net.Conn
	sock     syscall.RawConn // nc's socket, for endHold's attempt (nil: not a plain socket)
	done     <-chan struct{}
	timeout  time.Duration
	deadline time.Time // the write deadline last set on nc (writer only)
	writing  bool
	finished bool
	// readerActive: the reader is between requests of a burst, not
	// waiting for the socket (set only for sockets it waits on without
	// a buffer). The writer then lingers (cond) when it has caught up,
	// instead of exiting and being started again for the next reply.
	readerActive bool
	lingering    bool
	cond         sync.Cond
	// holding: the reader is answering a read on its own goroutine and
	// writes what is queued meanwhile itself once it is done (endHold),
	// rather than have a writer goroutine started for one reply.
	holding bool
	// beforeClose, if set, runs before the writer closes nc (the conn
	// takes a parked socket out of the parker's set).
	beforeClose func()
	// drained, when not nil, is closed at the writer's next progress (and
	// when the connection dies): a paused reader waits on it.
	drained chan struct{}
	budget  *backlog
	// unsent mirrors unsentLocked for readers without mu (mustPause).
	unsent atomic.Int64
	// gone mirrors dead || closing for readers without mu: the reader
	// stops taking requests of a connection that is going away.
	gone atomic.Bool
}

func newOutbound(budget *backlog) *outbound {
	o := &outbound{budget: budget}
	o.cond.L = &o.mu
	return o
}

// unsentLocked is the connection's backlog.
func (o *outbound) unsentLocked() int64 { return int64(len(o.w.Buf) + o.lazyBytes + o.inflight) }

// queuedLocked accounts n bytes just appended to a backlog of before.
func (o *outbound) queuedLocked(before int64, n int) {
	o.unsent.Add(int64(n))
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
	o.unsent.Add(-int64(n))
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
	o.kickLocked()
	o.mu.Unlock()
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
	o.kickLocked()
	o.mu.Unlock()
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
	o.kickLocked()
	o.mu.Unlock()
}

func (o *outbound) checkLimitLocked() bool {
	if o.w.Len()+o.lazyBytes > maxOutbound {
		o.setDeadLocked()
		return false
	}
	return true
}

// setDeadLocked marks the connection dead: nothing more is written.
func (o *outbound) setDeadLocked() {
	o.dead = true
	o.gone.Store(true)
}

// isGone reports, without a lock, whether the connection is being torn
// down (closing after a flush, or dead): its later requests are dropped.
func (o *outbound) isGone() bool { return o.gone.Load() }

// closeAfterFlush makes the writer close the socket once everything queued
// so far has been written; later frames are dropped.
func (o *outbound) closeAfterFlush() {
	o.mu.Lock()
	o.closing = true
	o.gone.Store(true)
	o.kickLocked()
	o.mu.Unlock()
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
	o.setDeadLocked()
	o.wakeReaderLocked()
	o.kickLocked()
	o.mu.Unlock()
}

// start makes o write to nc: from now on a writer goroutine runs while
// there is something to write, and exits when there is not, so that an
// idle connection costs no goroutine. nc is closed once the connection is
// finished (closeAfterFlush, kill, a failed write, or done closing).
//
// A write that blocks for longer than about timeout (the client stopped
// reading) closes the connection. Moving a socket's deadline updates a
// runtime timer, so it is moved only once less than 5/6 of timeout is
// left: every write still gets at least that long.
func (o *outbound) start(nc net.Conn, done <-chan struct{}, timeout time.Duration) {
	o.mu.Lock()
	o.nc, o.done, o.timeout = nc, done, timeout
	if sc, ok := nc.(syscall.Conn); ok {
		o.sock, _ = sc.SyscallConn() // nil (no inline writes) if it fails
	}
	o.kickLocked()
	o.mu.Unlock()
}

// kickLocked starts the writer if there is work for it and none runs.
func (o *outbound) kickLocked() {
	if o.nc == nil || o.finished {
		return
	}
	if len(o.w.Buf) == 0 && len(o.lazy) == 0 && !o.dead && !o.closing {
		return
	}
	if o.writing {
		o.wakeWriterLocked()
		return
	}
	if o.holding && !o.dead && !o.closing {
		return // the reader writes it (endHold)
	}
	o.writing = true
	go o.flush()
}

// takeLocked takes every queued frame for one write, leaving the buffers
// empty; the bytes taken stay in the backlog (inflight) until written.
func (o *outbound) takeLocked() (buf []byte, lazy []lazyFrame, taken int) {
	buf, lazy = o.w.Buf, o.lazy
	o.w.Buf, o.spare = o.spare[:0], nil
	o.lazy, o.lazySpare = o.lazySpare[:0], nil
	taken = len(buf) + o.lazyBytes
	o.lazyBytes = 0
	o.inflight = taken
	return buf, lazy, taken
}

// wroteLocked accounts a write of what takeLocked took, and keeps its
// buffers for the next.
func (o *outbound) wroteLocked(buf []byte, lazy []lazyFrame, taken int) {
	clear(lazy) // the bodies' data is the tree's: drop it
	o.inflight = 0
	o.releasedLocked(taken, o.unsentLocked())
	o.wakeReaderLocked()
	if cap(buf) <= retainBufferSize {
		o.spare = buf[:0]
	}
	o.lazySpare = lazy[:0]
}

// wakeWriterLocked wakes the writer if it lingers.
func (o *outbound) wakeWriterLocked() {
	if o.lingering {
		o.lingering = false
		o.cond.Signal()
	}
}

// readerBusy tells the writer the reader is working through a burst of
// requests: it lingers until the reader goes idle.
func (o *outbound) readerBusy() {
	o.mu.Lock()
	o.readerActive = true
	o.mu.Unlock()
}

// readerIdle tells the writer the reader waits for the socket: a
// lingering writer with nothing to write exits.
func (o *outbound) readerIdle() {
	o.mu.Lock()
	o.readerActive = false
	o.wakeWriterLocked()
	o.mu.Unlock()
}

// flush is the writer goroutine: it writes what is queued, in order, until
// nothing is, then exits (or finishes the connection); while the reader
// is busy it waits for more instead of exiting.
func (o *outbound) flush() {
	for {
		select {
		case <-o.done:
			o.finish()
			return
		default:
		}
		o.mu.Lock()
		dead, closing := o.dead, o.closing
		empty := len(o.w.Buf) == 0 && len(o.lazy) == 0
		if dead || (closing && empty) {
			o.mu.Unlock()
			o.finish()
			return
		}
		if empty {
			if o.readerActive {
				o.lingering = true
				o.cond.Wait()
				o.lingering = false
				o.mu.Unlock()
				continue
			}
			o.writing = false
			o.mu.Unlock()
			return
		}
		buf, lazy, taken := o.takeLocked()
		o.mu.Unlock()
		if !o.writeTaken(buf, lazy, taken, 0) {
			return
		}
	}
}

// writeTaken writes what takeLocked took (buf from its byte from on, lazy
// frames only when from is 0) and accounts it. A failed write ends the
// connection and reports false.
func (o *outbound) writeTaken(buf []byte, lazy []lazyFrame, taken, from int) bool {
	if err := o.writeOut(buf[from:], lazy); err != nil {
		o.kill()
		o.finish()
		return false
	}
	o.mu.Lock()
	o.wroteLocked(buf, lazy, taken)
	o.mu.Unlock()
	return true
}

// writeOut writes buf with the lazy frames encoded in their places (only
// whoever set writing calls it: the writer goroutine, or endHold). A
// write that blocks for longer than about o.timeout fails.
func (o *outbound) writeOut(buf []byte, lazy []lazyFrame) error {
	pos := 0
	for i := range lazy {
		f := &lazy[i]
		if err := o.writeLazy(buf[pos:f.at], f); err != nil {
			return err
		}
		pos = f.at
	}
	if pos == len(buf) {
		return nil
	}
	o.armDeadline()
	stagetrace.Mark(stagetrace.ReplyWrite, 0)
	_, err := o.nc.Write(buf[pos:])
	stagetrace.Mark(stagetrace.ReplyWritten, 0)
	return err
}

// armDeadline moves the socket's write deadline to o.timeout from now
// once less than 5/6 of it is left (moving it updates a runtime timer).
func (o *outbound) armDeadline() {
	if now := time.Now(); o.deadline.Sub(now) < o.timeout*5/6 {
		o.deadline = now.Add(o.timeout)
		_ = o.nc.SetWriteDeadline(o.deadline)
	}
}

// finish closes the socket (which also stops the reader) and releases
// what is still queued.
func (o *outbound) finish() {
	o.release()
	if o.beforeClose != nil {
		o.beforeClose()
	}
	_ = o.nc.Close()
}

// release drops everything still queued when the writer stops, so that
// neither the memory nor its share of the Server's backlog outlives the
// connection, and wakes a paused reader.
func (o *outbound) release() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.setDeadLocked()
	o.finished = true
	o.releasedLocked(int(o.unsentLocked()), 0)
	if o.budget != nil {
		o.budget.connClosed()
	}
	o.w.Buf, o.spare, o.inflight = nil, nil, 0
	o.lazy, o.lazySpare, o.lazyBytes = nil, nil, 0
	o.wakeReaderLocked()
}
