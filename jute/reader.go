package jute

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrMalformed is wrapped by every decoding error: truncated input, negative
// or oversize lengths, trailing garbage in a strict decode.
var ErrMalformed = errors.New("jute: malformed record")

// Reader decodes Jute values from a byte slice. The first error sticks: once a
// read fails every later read returns a zero value and Err reports the cause,
// so record decoders can read all fields and check once.
type Reader struct {
	buf []byte
	off int
	err error
}

// NewReader returns a Reader over b. The Reader does not copy b; byte buffers
// it returns alias b unless noted.
func NewReader(b []byte) *Reader { return &Reader{buf: b} }

// Reset points r at a new buffer and clears its error.
func (r *Reader) Reset(b []byte) { r.buf, r.off, r.err = b, 0, nil }

// Err returns the first decoding error, or nil.
func (r *Reader) Err() error { return r.err }

// Remaining is the number of unread bytes.
func (r *Reader) Remaining() int { return len(r.buf) - r.off }

// Offset is the number of bytes consumed so far.
func (r *Reader) Offset() int { return r.off }

func (r *Reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s at offset %d of %d", ErrMalformed, what, r.off, len(r.buf))
	}
}

func (r *Reader) take(n int, what string) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.buf)-r.off {
		r.fail(what)
		return nil
	}
	b := r.buf[r.off : r.off+n]
	r.off += n
	return b
}

// Int reads a big-endian 32-bit integer.
func (r *Reader) Int() int32 {
	b := r.take(4, "short int")
	if b == nil {
		return 0
	}
	return int32(binary.BigEndian.Uint32(b))
}

// Long reads a big-endian 64-bit integer.
func (r *Reader) Long() int64 {
	b := r.take(8, "short long")
	if b == nil {
		return 0
	}
	return int64(binary.BigEndian.Uint64(b))
}

// Bool reads a one-byte boolean (any non-zero byte is true, as in Java).
func (r *Reader) Bool() bool {
	b := r.take(1, "short bool")
	if b == nil {
		return false
	}
	return b[0] != 0
}

// length reads a length prefix; -1 means null. Any other negative value, or
// a length longer than the remaining input, is malformed.
func (r *Reader) length(what string) (n int, null bool) {
	l := r.Int()
	if r.err != nil {
		return 0, false
	}
	if l == -1 {
		return 0, true
	}
	if l < 0 || int(l) > r.Remaining() {
		r.fail(what)
		return 0, false
	}
	return int(l), false
}

// String reads a length-prefixed string; null reads as "".
func (r *Reader) String() string {
	s, _ := r.NullableString()
	return s
}

// NullableString reads a length-prefixed string and reports whether it was null.
func (r *Reader) NullableString() (string, bool) {
	b, null := r.stringBytes()
	return string(b), null
}

// stringBytes reads a length-prefixed string's bytes, in place.
func (r *Reader) stringBytes() (b []byte, null bool) {
	n, null := r.length("bad string length")
	if null || r.err != nil {
		return nil, null
	}
	return r.take(n, "short string"), false
}

// commonString reads a string like String, returning a constant for the
// schemes and ids that recur in ACLs and identities instead of a copy.
func (r *Reader) commonString() string {
	b, _ := r.stringBytes()
	switch string(b) { // compared without a conversion
	case "":
		return ""
	case "world":
		return "world"
	case "anyone":
		return "anyone"
	case "ip":
		return "ip"
	case "digest":
		return "digest"
	case "auth":
		return "auth"
	case "sasl":
		return "sasl"
	case "x509":
		return "x509"
	case "super":
		return "super"
	case "127.0.0.1":
		return "127.0.0.1"
	}
	return string(b)
}

// Buffer reads a length-prefixed buffer, copying it; null reads as nil and an
// empty buffer as a non-nil empty slice.
func (r *Reader) Buffer() []byte {
	b := r.BufferView()
	if b == nil {
		return nil
	}
	out := make([]byte, len(b))
	copy(out, b)
	return out
}

// BufferView reads a length-prefixed buffer like Buffer, without copying:
// the result aliases the input (its capacity ends with it, so an append
// cannot overwrite what follows).
func (r *Reader) BufferView() []byte {
	n, null := r.length("bad buffer length")
	if null || r.err != nil {
		return nil
	}
	b := r.take(n, "short buffer")
	if b == nil {
		return nil
	}
	return b[:n:n]
}

// Count reads a vector count; null (-1) reads as 0 with null=true. Each
// element takes at least minElem bytes (at least 1: no record of the
// protocol encodes to nothing), so counts that cannot fit in the remaining
// input are rejected before any allocation.
func (r *Reader) Count(minElem int) (n int, null bool) {
	l := r.Int()
	if r.err != nil {
		return 0, false
	}
	if l == -1 {
		return 0, true
	}
	minElem = max(minElem, 1)
	if l < 0 || int(l) > r.Remaining()/minElem {
		r.fail("bad vector count")
		return 0, false
	}
	return int(l), false
}

// Strings reads a vector of strings; null reads as nil.
func (r *Reader) Strings() []string {
	n, null := r.Count(4)
	if null || r.err != nil {
		return nil
	}
	out := make([]string, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		out = append(out, r.String())
	}
	return out
}
