package datadir

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/golang/snappy"
)

// xerialMagic opens the stream snappy-java's SnappyOutputStream writes
// (ZooKeeper's snapshot.<zxid>.snappy): the magic, then two int32s (its
// format version and the oldest compatible one), then blocks, each an
// int32 length and that many bytes of raw snappy.
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

// unsnappy decodes a snappy-java stream; input without its header is one
// raw snappy block, as SnappyInputStream reads it.
func unsnappy(b []byte) ([]byte, error) {
	if !bytes.HasPrefix(b, xerialMagic) {
		out, err := snappy.Decode(nil, b)
		if err != nil {
			return nil, fmt.Errorf("%w: snappy: %w", ErrCorrupt, err)
		}
		return out, nil
	}
	if len(b) < 16 {
		return nil, fmt.Errorf("%w: snappy: short header", ErrCorrupt)
	}
	var out []byte
	for rest := b[16:]; len(rest) > 0; {
		if len(rest) < 4 {
			return nil, fmt.Errorf("%w: snappy: torn block length", ErrCorrupt)
		}
		n := binary.BigEndian.Uint32(rest)
		if uint64(n) > uint64(len(rest)-4) {
			return nil, fmt.Errorf("%w: snappy: block of %d bytes past the end", ErrCorrupt, n)
		}
		block, err := snappy.Decode(nil, rest[4:4+n])
		if err != nil {
			return nil, fmt.Errorf("%w: snappy: %w", ErrCorrupt, err)
		}
		out = append(out, block...)
		rest = rest[4+n:]
	}
	return out, nil
}
