package jute

import "encoding/binary"

// Writer appends Jute-encoded values to Buf. The zero value is ready to use;
// set Buf to a reused slice (length 0) to avoid allocation.
type Writer struct {
	Buf []byte
}

// Int appends a big-endian 32-bit integer.
func (w *Writer) Int(v int32) { w.Buf = binary.BigEndian.AppendUint32(w.Buf, uint32(v)) }

// Long appends a big-endian 64-bit integer.
func (w *Writer) Long(v int64) { w.Buf = binary.BigEndian.AppendUint64(w.Buf, uint64(v)) }

// Bool appends a one-byte boolean.
func (w *Writer) Bool(v bool) {
	if v {
		w.Buf = append(w.Buf, 1)
		return
	}
	w.Buf = append(w.Buf, 0)
}

// String appends a length-prefixed UTF-8 string. Go strings cannot be null, so
// an empty string is written with length 0; use NullString for length -1.
func (w *Writer) String(s string) {
	w.Int(int32(len(s)))
	w.Buf = append(w.Buf, s...)
}

// NullString appends a null string (length -1).
func (w *Writer) NullString() { w.Int(-1) }

// Buffer appends a length-prefixed byte buffer; a nil slice is written as
// null (length -1), an empty non-nil slice as length 0.
func (w *Writer) Buffer(b []byte) {
	if b == nil {
		w.Int(-1)
		return
	}
	w.Int(int32(len(b)))
	w.Buf = append(w.Buf, b...)
}

// Strings appends a vector of strings; a nil slice is written as an empty
// vector (count 0), which is what ZooKeeper servers send for "no children".
func (w *Writer) Strings(v []string) {
	w.Int(int32(len(v)))
	for _, s := range v {
		w.String(s)
	}
}

// Raw appends bytes without a length prefix.
func (w *Writer) Raw(b []byte) { w.Buf = append(w.Buf, b...) }

// Len is the number of bytes written so far.
func (w *Writer) Len() int { return len(w.Buf) }

// Reset empties the writer, keeping its capacity.
func (w *Writer) Reset() { w.Buf = w.Buf[:0] }
