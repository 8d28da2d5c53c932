package session

import (
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// maxOutbound is how many unsent bytes a connection may accumulate before
// it is judged stalled and closed; other sessions are never held up by it.
const maxOutbound = 64 << 20

// outbound is a connection's ordered send buffer. Producers (the reader,
// the FSM, watch fan-out) append complete frames under mu; whoever writes
// swaps the buffer out and writes it in one call.
//
// Two goroutines write, one at a time (writing): the connection's writer,
// woken by the producers, and the reader itself. A read the reader answers
// at once (hold) does not wake the writer: its reply, and anything else
// queued meanwhile, is left for the reader (deferred), which writes it
// itself when it is about to wait for the client, or hands it to the
// writer when more requests are already buffered (flushDeferred). A
// request-response client thus gets each read's reply with one goroutine
// fewer on the way (one wake-up and one park less per read).
type outbound struct {
	mu       sync.Mutex
	w        jute.Writer // pending bytes
	spare    []byte
	closing  bool // close once everything queued so far is written
	dead     bool // stop now
	held     bool // the reader is answering a read: leave what is queued to it
	writing  bool // a write to the socket is in progress (writer or reader)
	deferred atomic.Bool
	wake     chan struct{}

	// timeout bounds a blocked write; deadline is the write deadline last
	// set on the socket. Only the goroutine that set writing uses them.
	timeout  time.Duration
	deadline time.Time
}

// newOutbound returns an empty buffer whose writes give up after timeout.
func newOutbound(timeout time.Duration) *outbound {
	return &outbound{wake: make(chan struct{}, 1), timeout: timeout}
}

// queuedLocked is called with mu held after a frame was queued: it reports
// whether to wake the writer, or notes that the reader will write it.
func (o *outbound) queuedLocked() bool {
	if o.held {
		o.deferred.Store(true)
		return false
	}
	return true
}

// hold makes frames queued until release the reader's to write
// (flushDeferred). Only the reader calls it, around an answer it gives at
// once; it must call flushDeferred before it next waits for the client.
func (o *outbound) hold() {
	o.mu.Lock()
	o.held = true
	o.mu.Unlock()
}

// release ends hold.
func (o *outbound) release() {
	o.mu.Lock()
	o.held = false
	o.mu.Unlock()
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
	o.mu.Lock()
	if o.dead || o.closing {
		o.mu.Unlock()
		return false
	}
	at := jute.BeginFrame(&o.w)
	h := jute.ReplyHeader{Xid: xid, Zxid: zxid, Err: code}
	h.Encode(&o.w)
	if code == jute.OK && encode != nil {
		encode(&o.w)
	}
	jute.EndFrame(&o.w, at)
	ok := o.checkLimitLocked()
	wake := o.queuedLocked()
	o.mu.Unlock()
	if wake {
		o.signal()
	}
	return ok
}

// record queues a frame holding a record without a reply header
// (ConnectResponse).
func (o *outbound) record(rec jute.Record) {
	o.mu.Lock()
	at := jute.BeginFrame(&o.w)
	rec.Encode(&o.w)
	jute.EndFrame(&o.w, at)
	wake := o.queuedLocked()
	o.mu.Unlock()
	if wake {
		o.signal()
	}
}

// raw queues unframed bytes (four-letter word output).
func (o *outbound) raw(b []byte) {
	o.mu.Lock()
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
	o.mu.Unlock()
	o.signal()
}

// inlineWriteMax is the most the reader writes itself. A larger backlog
// goes to the writer, so that a client that sends without reading can fill
// its socket without stopping this connection's reader for long (the
// writer's write timeout then applies while the reader goes on).
const inlineWriteMax = 64 << 10

// flushDeferred writes what was left to the reader (hold), if anything:
// itself when more is false (the reader is about to wait for the client),
// by waking the writer when more requests are buffered (the writer then
// writes their replies together), a write is already under way or the
// backlog is over inlineWriteMax.
func (o *outbound) flushDeferred(nc net.Conn, more bool) {
	if !o.deferred.Load() {
		return
	}
	o.mu.Lock()
	o.deferred.Store(false)
	if more || o.writing || o.dead || o.closing || len(o.w.Buf) == 0 || len(o.w.Buf) > inlineWriteMax {
		o.mu.Unlock()
		o.signal()
		return
	}
	buf := o.take()
	o.mu.Unlock()
	err := o.write(nc, buf)
	o.mu.Lock()
	again := o.done(buf, err)
	o.mu.Unlock()
	if again {
		o.signal() // frames queued during the write, or a close to carry out
	}
}

// take swaps out the pending bytes for writing; mu is held and writing is
// false.
func (o *outbound) take() []byte {
	buf := o.w.Buf
	o.w.Buf, o.spare = o.spare[:0], nil
	o.writing = true
	return buf
}

// done ends a write begun by take; mu is held. It keeps buf for reuse and
// reports whether there is more to do: frames to write, a close to carry
// out.
func (o *outbound) done(buf []byte, err error) bool {
	o.writing = false
	if err != nil {
		o.dead = true
		return true
	}
	if cap(buf) <= retainBufferSize {
		o.spare = buf[:0]
	}
	return len(o.w.Buf) > 0 || o.closing || o.dead
}

// write writes buf to nc; the caller set writing.
//
// A write that blocks for longer than about timeout (the client stopped
// reading) fails, and the connection is closed. Moving a socket's
// deadline updates a runtime timer, so it is moved only once less than
// 5/6 of timeout is left: every write still gets at least that long.
func (o *outbound) write(nc net.Conn, buf []byte) error {
	if now := time.Now(); o.deadline.Sub(now) < o.timeout*5/6 {
		o.deadline = now.Add(o.timeout)
		_ = nc.SetWriteDeadline(o.deadline)
	}
	_, err := nc.Write(buf)
	return err
}

// writeLoop is the connection's writer goroutine. It returns when the
// connection is closed; it then closes nc, which also stops the reader.
func (o *outbound) writeLoop(nc net.Conn, done <-chan struct{}) {
	defer nc.Close()
	for {
		select {
		case <-o.wake:
		case <-done:
			return
		}
		for {
			o.mu.Lock()
			if o.dead {
				o.mu.Unlock()
				return
			}
			if o.writing {
				// The reader is writing; it wakes this goroutine when
				// it is done if anything is left.
				o.mu.Unlock()
				break
			}
			if len(o.w.Buf) == 0 {
				closing := o.closing
				o.mu.Unlock()
				if closing {
					return
				}
				break
			}
			buf := o.take()
			o.mu.Unlock()
			err := o.write(nc, buf)
			o.mu.Lock()
			o.done(buf, err)
			o.mu.Unlock()
			// Frames queued during the write go out now.
		}
	}
}
