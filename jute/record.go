package jute

import "fmt"

// Record is a Jute record: it appends itself to a Writer and fills itself from
// a Reader. Decode returns the Reader's sticky error.
type Record interface {
	Encode(w *Writer)
	Decode(r *Reader) error
}

// Marshal encodes rec into a new byte slice.
func Marshal(rec Record) []byte {
	var w Writer
	rec.Encode(&w)
	return w.Buf
}

// Unmarshal decodes rec from b, requiring that every byte is consumed.
func Unmarshal(b []byte, rec Record) error {
	r := NewReader(b)
	if err := rec.Decode(r); err != nil {
		return err
	}
	if r.Remaining() != 0 {
		return fmt.Errorf("%w: %d trailing bytes", ErrMalformed, r.Remaining())
	}
	return nil
}
