package session

import (
	"errors"
	"os"
	"syscall"
)

// hold tells o that the reader is about to answer a read on its own
// goroutine: what is queued until endHold waits for it.
func (o *outbound) hold() {
	o.mu.Lock()
	o.holding = true
	o.mu.Unlock()
}

// endHold ends hold. If the reader has more requests buffered (more), or
// a writer runs, or the connection is going away, or the socket is not a
// plain one, the writer goroutine takes what is queued as before.
// Otherwise the reader, about to wait for its next request anyway, tries
// one write of it that does not wait: a lone read's reply (a ping's, a
// watcher's re-read) then costs no goroutine start, no hand-off and no
// lingering writer to wake. Whatever the socket does not take at once, and
// whatever is queued meanwhile, goes to a writer goroutine, so the reader
// never blocks on a client that does not read (it goes on reading its
// pings) and is never kept writing a stream of notifications.
func (o *outbound) endHold(more bool) {
	o.mu.Lock()
	o.holding = false
	if more || o.writing || o.sock == nil || o.finished || o.dead || o.closing ||
		len(o.w.Buf) == 0 || len(o.lazy) > 0 {
		o.kickLocked()
		o.mu.Unlock()
		return
	}
	o.writing = true
	buf, lazy, taken := o.takeLocked()
	o.mu.Unlock()
	n, err := o.tryWrite(buf)
	if err != nil {
		o.kill()
		o.finish()
		return
	}
	if n < len(buf) {
		go o.flushRest(buf, n, taken) // the socket's buffer is full
		return
	}
	o.mu.Lock()
	o.wroteLocked(buf, lazy, taken)
	o.writing = false
	o.kickLocked() // what was queued meanwhile, if anything
	o.mu.Unlock()
}

// tryWrite makes one write(2) of b that does not wait, and reports how
// much the socket took (0 if its buffer was full), or the error that ends
// the connection. It moves the write deadline as any write does: the
// runtime refuses a write on a socket whose deadline has passed.
func (o *outbound) tryWrite(b []byte) (int, error) {
	o.armDeadline()
	var n int
	var werr error
	err := o.sock.Write(func(fd uintptr) bool {
		n, werr = syscall.Write(int(fd), b)
		return true
	})
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return 0, nil // the writer's wait meets it again and ends the connection
	case err != nil:
		return 0, err
	case werr == syscall.EAGAIN || werr == syscall.EINTR:
		return 0, nil
	case werr != nil:
		return 0, werr
	}
	return n, nil
}

// flushRest is the writer goroutine started by endHold when the socket
// took only the first n bytes of buf (taken in the backlog): it writes the
// rest, waiting as long as the write timeout allows, then goes on as any
// writer.
func (o *outbound) flushRest(buf []byte, n, taken int) {
	if o.writeTaken(buf, nil, taken, n) {
		o.flush()
	}
}
