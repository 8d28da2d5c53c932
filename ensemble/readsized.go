package ensemble

import (
	"bytes"
	"io"
)

// readSized reads n bytes of a length-prefixed field or frame from r into
// memory of their own. Up to eagerAlloc is allocated at once; a longer
// one grows as its bytes arrive, so a peer that declares a large length
// and sends nothing costs nothing.
func readSized(r io.Reader, n uint64) ([]byte, error) {
	if n <= eagerAlloc {
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		return b, nil
	}
	var buf bytes.Buffer
	m, err := buf.ReadFrom(io.LimitReader(r, int64(n)))
	if err == nil && uint64(m) != n {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
