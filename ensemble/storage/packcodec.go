package storage

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
	"time"

	"github.com/hashicorp/raft"
)

// packLogType marks a bolt record that holds a pack of log entries. Raft's
// own log types are small numbers and Raft never sees this one: the
// PackedLogStore unpacks records before handing entries out.
const packLogType raft.LogType = 0xA7

// packVersion is the first byte of a pack's encoding: version 2 ends
// with a CRC-32C of everything before it. Version 1 packs (written before
// checksums) have none and are still read; a log holds both until the
// older ones are compacted away.
const (
	packVersion   = 2
	packVersionV1 = 1
	packCRCSize   = 4
)

// errBadPack reports a pack record that does not decode.
var errBadPack = fmt.Errorf("malformed log pack: %w", ErrCorrupt)

// errPackChecksum reports a version 2 pack whose checksum does not match.
var errPackChecksum = fmt.Errorf("log pack fails its checksum: %w", ErrCorrupt)

// pack is a decoded run of consecutive log entries.
type pack struct {
	first uint64
	logs  []raft.Log
}

// contains reports whether the pack holds entry idx.
func (p *pack) contains(idx uint64) bool {
	return idx >= p.first && idx-p.first < uint64(len(p.logs))
}

// encodePack encodes consecutive entries:
//
//	version byte, uvarint first index, uvarint count, then per entry:
//	uvarint term, type byte, uvarint len + data, uvarint len + extensions,
//	varint AppendedAt in Unix nanoseconds (0 when unset);
//	then uint32 CRC-32C of all the bytes before it.
func encodePack(logs []*raft.Log) []byte {
	return appendPack(nil, logs)
}

// packSize bounds the length of logs' encoding.
func packSize(logs []*raft.Log) int {
	size := 1 + 2*binary.MaxVarintLen64 + packCRCSize
	for _, l := range logs {
		size += 4*binary.MaxVarintLen64 + 1 + len(l.Data) + len(l.Extensions)
	}
	return size
}

// appendPack appends the encoding of logs to b, checksummed (version 2).
func appendPack(b []byte, logs []*raft.Log) []byte {
	start := len(b)
	b = appendPackBody(b, logs, packVersion)
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b[start:], crcTable))
}

// appendUncheckedPack appends a version 1 pack (no checksum of its own),
// for a journal record, whose CRC-32C already covers it: a second one
// over the same bytes cost the journal's appends a tenth of their CPU.
func appendUncheckedPack(b []byte, logs []*raft.Log) []byte {
	return appendPackBody(b, logs, packVersionV1)
}

// appendPackBody appends version and the entries' encoding.
func appendPackBody(b []byte, logs []*raft.Log, version byte) []byte {
	b = slices.Grow(b, packSize(logs))
	b = append(b, version)
	b = binary.AppendUvarint(b, logs[0].Index)
	b = binary.AppendUvarint(b, uint64(len(logs)))
	for _, l := range logs {
		b = binary.AppendUvarint(b, l.Term)
		b = append(b, byte(l.Type))
		b = binary.AppendUvarint(b, uint64(len(l.Data)))
		b = append(b, l.Data...)
		b = binary.AppendUvarint(b, uint64(len(l.Extensions)))
		b = append(b, l.Extensions...)
		var at int64
		if !l.AppendedAt.IsZero() {
			at = l.AppendedAt.UnixNano()
		}
		b = binary.AppendVarint(b, at)
	}
	return b
}

// checkPack verifies a pack's version and checksum and returns the bytes
// after the version byte, without the checksum.
func checkPack(data []byte) ([]byte, error) {
	if len(data) == 0 {
		return nil, errBadPack
	}
	switch data[0] {
	case packVersionV1:
		return data[1:], nil
	case packVersion:
		if len(data) < 1+packCRCSize {
			return nil, errBadPack
		}
		body := data[:len(data)-packCRCSize]
		if crc32.Checksum(body, crcTable) != binary.BigEndian.Uint32(data[len(body):]) {
			return nil, errPackChecksum
		}
		return body[1:], nil
	}
	return nil, fmt.Errorf("%w: unknown version %d", errBadPack, data[0])
}

// decodeRecord unpacks a stored record. A record of any other type is an
// entry written before packs existed and reads as a one-entry pack. The
// entries' Data and Extensions share the record's buffer.
func decodeRecord(rec *raft.Log) (*pack, error) {
	if rec.Type != packLogType {
		return &pack{first: rec.Index, logs: []raft.Log{*rec}}, nil
	}
	body, err := checkPack(rec.Data)
	if err != nil {
		return nil, fmt.Errorf("log pack ending at entry %d: %w", rec.Index, err)
	}
	d := packDecoder{b: body}
	first := d.uvarint()
	count := d.uvarint()
	// Every entry takes at least five bytes, which bounds count before
	// anything is allocated for it.
	if d.err != nil || count == 0 || count > uint64(len(d.b))/5 || first+count-1 != rec.Index {
		return nil, fmt.Errorf("log pack ending at entry %d: header: %w", rec.Index, errBadPack)
	}
	p := &pack{first: first, logs: make([]raft.Log, count)}
	for i := range p.logs {
		l := &p.logs[i]
		l.Index = first + uint64(i)
		l.Term = d.uvarint()
		l.Type = raft.LogType(d.byte())
		l.Data = d.bytes()
		l.Extensions = d.bytes()
		if at := d.varint(); at != 0 {
			l.AppendedAt = time.Unix(0, at)
		}
	}
	if d.err != nil || len(d.b) != 0 {
		return nil, fmt.Errorf("log pack ending at entry %d: entries: %w", rec.Index, errBadPack)
	}
	return p, nil
}

// packDecoder reads a pack's fields, remembering the first error.
type packDecoder struct {
	b   []byte
	err error
}

func (d *packDecoder) byte() byte {
	if d.err != nil || len(d.b) == 0 {
		d.err = errBadPack
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *packDecoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errBadPack
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *packDecoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errBadPack
		return 0
	}
	d.b = d.b[n:]
	return v
}

// bytes returns a length-prefixed field (nil when empty), capped so an
// append by a reader cannot overwrite the next field.
func (d *packDecoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.err = errBadPack
		return nil
	}
	if n == 0 {
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}
