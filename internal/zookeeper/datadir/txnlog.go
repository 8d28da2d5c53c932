package datadir

import (
	"encoding/binary"
	"fmt"
	"hash/adler32"

	"github.com/zkraft/zkraft/jute"
)

// eor ends every transaction record in a log ('B').
const eor = 0x42

// Txn is one logged transaction: TxnHeader and the record's bytes (a
// CreateTxn, SetDataTxn... by Type, possibly followed by a TxnDigest).
type Txn struct {
	ClientID int64 // the session
	Cxid     int32
	Zxid     int64
	Time     int64 // the leader's clock, ms since the epoch
	Type     jute.Op
	Body     []byte
}

// ReadLog parses a log file's bytes and calls fn for each transaction in
// order. A log ends at a zero length (ZooKeeper preallocates its files
// with zeros) or at a torn record at the end of the file, whose write
// was never acknowledged; a bad record followed by more data is
// corruption.
func ReadLog(b []byte, fn func(Txn) error) error {
	r := jute.NewReader(b)
	if err := readHeader(r, logMagic); err != nil {
		return err
	}
	off := r.Offset()
	for len(b)-off >= 12 {
		crc := binary.BigEndian.Uint64(b[off:])
		n := int(int32(binary.BigEndian.Uint32(b[off+8:])))
		start := off + 12
		if n == 0 {
			return nil // the preallocated zeros after the last record
		}
		end := start + n
		if n < 0 || end >= len(b) || b[end] != eor || crc != uint64(adler32.Checksum(b[start:end])) {
			if allZero(b[min(max(end, start), len(b)):]) {
				return nil // a torn last record
			}
			return fmt.Errorf("%w: log record at offset %d", ErrCorrupt, off)
		}
		hr := jute.NewReader(b[start:end])
		t := Txn{ClientID: hr.Long(), Cxid: hr.Int(), Zxid: hr.Long(), Time: hr.Long(), Type: jute.Op(hr.Int())}
		if err := hr.Err(); err != nil {
			return fmt.Errorf("%w: txn header at offset %d: %w", ErrCorrupt, off, err)
		}
		t.Body = b[start+hr.Offset() : end]
		if err := fn(t); err != nil {
			return err
		}
		off = end + 1
	}
	return nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
