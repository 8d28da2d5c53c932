package session

import (
	"bufio"
	"io"
	"sync"
	"syscall"
)

// readerPool holds the read buffers of connections that are not reading a
// frame. An idle connection (most of a member's thousands) holds none: its
// reader waits for the socket to become readable without a buffer, and
// takes one from the pool only when a request arrives.
var readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, readBufferSize) }}

// frameReader is a connection's buffered reader, held only while bytes
// are on their way.
type frameReader struct {
	src io.Reader
	br  *bufio.Reader
	// raw waits for readability without reading (nil when src is not a
	// plain socket, e.g. TLS: then the buffer is kept).
	raw  syscall.RawConn
	wait func(uintptr) bool // readable, as a value made once
	peek [1]byte
}

func newFrameReader(src io.Reader) *frameReader {
	r := &frameReader{src: src}
	if sc, ok := src.(syscall.Conn); ok && canPeek {
		if raw, err := sc.SyscallConn(); err == nil {
			r.raw = raw
			r.wait = r.readable
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

// reader returns the buffered reader, first waiting (without a buffer)
// for something to read if none is held.
func (r *frameReader) reader() *bufio.Reader {
	if r.br != nil {
		return r.br
	}
	if r.raw != nil {
		_ = r.raw.Read(r.wait) // an error shows again on the read that follows
	}
	r.br = readerPool.Get().(*bufio.Reader)
	r.br.Reset(r.src)
	return r.br
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
