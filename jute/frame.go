package jute

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// ErrFrameTooLarge is returned for a frame whose length prefix exceeds the
// limit (jute.maxbuffer) or is negative; the caller should close the
// connection. Nothing is allocated for such a frame.
var ErrFrameTooLarge = errors.New("jute: frame exceeds jute.maxbuffer")

// ReadFrame reads one length-prefixed frame from r into buf (grown if
// needed) and returns the payload. Frames longer than max are refused before
// any allocation.
func ReadFrame(r io.Reader, buf []byte, max int) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(hdr[:]))
	if n < 0 || int(n) > max {
		return nil, fmt.Errorf("%w: length %d, limit %d", ErrFrameTooLarge, n, max)
	}
	if cap(buf) < int(n) {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, fmt.Errorf("jute: short frame: %w", err)
	}
	return buf, nil
}

// BeginFrame reserves the 4-byte length prefix at the end of w; EndFrame fills
// it in once the payload is written. It returns the prefix's offset.
func BeginFrame(w *Writer) int {
	at := len(w.Buf)
	w.Buf = append(w.Buf, 0, 0, 0, 0)
	return at
}

// EndFrame writes the length of everything after the prefix at offset at.
func EndFrame(w *Writer, at int) {
	binary.BigEndian.PutUint32(w.Buf[at:], uint32(len(w.Buf)-at-4))
}
