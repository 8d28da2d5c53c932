package session

import (
	"bufio"
	"errors"
	"io"
	"os"
	"sync"
	"syscall"
	"time"
)

// readerPool holds the read buffers of connections that are not reading a
// frame. An idle connection (most of a member's thousands) holds none: its
// reader waits for the socket to become readable without a buffer, and
// takes one from the pool only when a request arrives.
var readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, readBufferSize) }}

// errWouldBlock is what a non-blocking read attempt (tryFill) meets when
// the socket has nothing to read.
var errWouldBlock = errors.New("session: nothing to read yet")

// frameReader is a connection's buffered reader, held only while bytes
// are on their way. It is also the buffer's source: it reads the socket,
// and once, without waiting, for tryFill.
//
// A busy connection keeps its buffer: when the buffer runs dry the reader
// first tries one non-blocking read into it (a pipelining client has
// usually sent more by then), and gives the buffer back only when the
// socket has nothing. A connection whose requests keep coming (hot) waits
// with its buffer as a plain blocking read until it has been idle for up
// to parkAfter. Either costs no more system calls per batch than a
// blocking read, instead of a peek to wait, another to take a buffer, and
// then the read.
type frameReader struct {
	src io.Reader
	br  *bufio.Reader
	// raw waits for readability without reading (nil when src is not a
	// plain socket, e.g. TLS: then the buffer is kept).
	raw  syscall.RawConn
	wait func(uintptr) bool // readable, as a value made once
	once func(uintptr) bool // readOnce, as a value made once
	peek [1]byte
	// hot: the connection's last wait without a buffer ended with a
	// request, not park's deadline. A hot connection keeps its buffer
	// while it waits for the next request too (hotWait), as a plain
	// blocking read, until that deadline passes with nothing read.
	hot     bool
	hotWait bool
	// try makes the next Read one non-blocking attempt; p, n and err are
	// that attempt's buffer and result (readOnce).
	try bool
	p   []byte
	n   int
	err error
	// deadline is the read deadline park last set on the socket (zero:
	// none). It is left in place between waits, so a busy connection
	// does not move a runtime timer for every request; a read of a frame
	// that meets it clears it and goes on.
	deadline time.Time
	dl       interface{ SetReadDeadline(time.Time) error }
}

func newFrameReader(src io.Reader) *frameReader {
	r := &frameReader{src: src}
	if sc, ok := src.(syscall.Conn); ok && canPeek {
		dl, okDL := src.(interface{ SetReadDeadline(time.Time) error })
		if raw, err := sc.SyscallConn(); err == nil && okDL {
			r.raw, r.dl = raw, dl
			r.wait = r.readable
			r.once = r.readOnce
		}
	}
	return r
}

// readable is the RawConn.Read callback: it reports whether the socket has
// bytes (or an error, or EOF) to read, peeking without consuming; when it
// reports false the runtime parks the reader until the socket is readable
// and asks again.
func (r *frameReader) readable(fd uintptr) bool {
	return peekReady(fd, r.peek[:])
}

// readOnce is the RawConn.Read callback of tryFill: one read that does not
// wait.
func (r *frameReader) readOnce(fd uintptr) bool {
	r.n, r.err = readNow(fd, r.p)
	return true
}

// Read implements io.Reader for the buffer: a read of the socket, or one
// attempt that does not wait (try).
func (r *frameReader) Read(p []byte) (int, error) {
	if r.try {
		r.try, r.p = false, p
		err := r.raw.Read(r.once)
		r.p = nil
		if err != nil {
			return 0, err
		}
		return r.n, r.err
	}
	for {
		n, err := r.src.Read(p)
		if n == 0 && !r.hotWait && !r.deadline.IsZero() && errors.Is(err, os.ErrDeadlineExceeded) {
			r.clearDeadline() // park's wait timer, not a limit on frames
			continue
		}
		return n, err
	}
}

// clearDeadline takes park's read deadline off the socket.
func (r *frameReader) clearDeadline() {
	if !r.deadline.IsZero() {
		r.deadline = time.Time{}
		_ = r.dl.SetReadDeadline(time.Time{})
	}
}

// reader returns the buffered reader, first waiting (without a buffer)
// for something to read if none is held.
func (r *frameReader) reader() *bufio.Reader {
	if r.br == nil && r.raw != nil {
		_ = r.raw.Read(r.wait) // an error shows again on the read that follows
	}
	return r.take()
}

// take returns the buffered reader, taking a buffer from the pool without
// waiting if none is held.
func (r *frameReader) take() *bufio.Reader {
	if r.br == nil {
		r.br = readerPool.Get().(*bufio.Reader)
		r.br.Reset(r)
	}
	return r.br
}

// buffered reports whether bytes already read wait in the buffer (more
// requests of a pipelined burst), without reading the socket.
func (r *frameReader) buffered() bool { return r != nil && r.br != nil && r.br.Buffered() > 0 }

// busy reports whether the reader holds bytes to read (or the buffer is
// kept anyway): buffered ones, or those a read that does not wait finds
// on the socket. If there are none the buffer goes back to the pool, and
// the caller waits for the socket without it (park).
func (r *frameReader) busy() bool {
	if r.raw == nil {
		return true
	}
	if r.br == nil {
		return false
	}
	if r.br.Buffered() > 0 {
		return true
	}
	if r.hot && !r.deadline.IsZero() {
		if r.waitHot() {
			return true
		}
	} else if r.tryFill() {
		return true
	}
	r.idle()
	return false
}

// waitHot waits for the next request of a hot connection with the
// buffer held, as a plain blocking read (no peeks): it reports false once
// park's deadline passes with nothing read, and the connection is no
// longer hot.
func (r *frameReader) waitHot() bool {
	r.hotWait = true
	_, err := r.br.Peek(1)
	r.hotWait = false
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		r.hot = false
		return false
	}
	return true // bytes, or an error the read that follows meets again
}

// tryFill reads into the empty buffer what the socket has, without
// waiting; it reports false if the socket had nothing. An error or EOF
// counts as something: the read that follows meets it again.
func (r *frameReader) tryFill() bool {
	r.try = true
	_, err := r.br.Peek(1)
	r.try = false
	return err != errWouldBlock
}

// idle gives the buffer back to the pool if nothing is buffered in it, so
// that a connection waiting for its next request holds none.
func (r *frameReader) idle() {
	if r.br == nil || r.raw == nil || r.br.Buffered() > 0 {
		return
	}
	r.br.Reset(nil)
	readerPool.Put(r.br)
	r.br = nil
}

// release gives the buffer back for good (the connection is done).
func (r *frameReader) release() {
	if r.br != nil {
		r.br.Reset(nil)
		readerPool.Put(r.br)
		r.br = nil
	}
}
