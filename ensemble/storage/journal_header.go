package storage

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// The journal's generations, headers and halves.
//
// Records go to the two halves in turn: generation g writes in half g%2.
// A wrap starts generation g+1 in the other half, and its header also
// names g's records, which stay intact and are replayed on open before
// g+1's. So a wrap costs one header write and fdatasync; the entries of
// g need not be in bolt until the wrap after it overwrites g's half
// (normally the flusher stored them long before). Before halves a wrap
// stored every pending entry into bolt first, holding up that member's
// appends for a bolt transaction (2-24 ms, every few seconds under load).
//
// Header slot (offset gen%2*journalSlotSize), version 2:
//
//	magic "zkrjrnl2", uint64 gen, uint64 start (offset of gen's records),
//	uint64 prev (offset of gen-1's records, replayed first; 0 for none),
//	uint32 CRC-32C of the 32 bytes before it
//
// Version 1 headers (magic "zkrjrnl1", gen, CRC of 16 bytes; records from
// journalHeaderSize over the whole file) are still read, so a data
// directory from before halves opens unchanged.

// journalMagic opens a version 2 header, journalMagicV1 a version 1 one.
var (
	journalMagic   = [8]byte{'z', 'k', 'r', 'j', 'r', 'n', 'l', '2'}
	journalMagicV1 = [8]byte{'z', 'k', 'r', 'j', 'r', 'n', 'l', '1'}
)

// journalHeaderLen is a version 2 header's length.
const journalHeaderLen = 36

// journalHeader is one generation's header.
type journalHeader struct {
	gen   uint64
	start int64 // offset of gen's first record
	prev  int64 // offset of gen-1's first record, replayed before gen's; 0 for none
}

// half is the size of each half of the journal's record space.
func (j *Journal) half() int64 {
	return ((j.size - journalHeaderSize) / 2) &^ (journalSlotSize - 1)
}

// regionStart is where generation gen's records begin.
func (j *Journal) regionStart(gen uint64) int64 {
	return journalHeaderSize + int64(gen%2)*j.half()
}

// begin starts the next generation in the half the current one is not
// using. With carry the new header also names the current generation's
// records, which recovery then replays first, so a wrap stores nothing
// into inner. Without carry (open, a truncation, a batch larger than a
// half) everything the journal held must already be in inner. The
// caller holds writeMu (or is opening the journal).
func (j *Journal) begin(carry bool) error {
	h := journalHeader{gen: j.gen + 1}
	h.start = j.regionStart(h.gen)
	if carry && j.genLast != 0 {
		h.prev = j.start
	}
	buf := make([]byte, journalHeaderLen)
	copy(buf, journalMagic[:])
	binary.BigEndian.PutUint64(buf[8:16], h.gen)
	binary.BigEndian.PutUint64(buf[16:24], uint64(h.start))
	binary.BigEndian.PutUint64(buf[24:32], uint64(h.prev))
	binary.BigEndian.PutUint32(buf[32:36], crc32.Checksum(buf[:32], crcTable))
	if _, err := j.f.WriteAt(buf, int64(h.gen%2)*journalSlotSize); err != nil {
		return j.broken(fmt.Errorf("storage: journal header: %w", err))
	}
	if err := j.sync(); err != nil {
		return err
	}
	j.prevLast = 0
	if h.prev != 0 {
		j.prevLast = j.genLast
	}
	j.gen, j.start, j.tail, j.genLast = h.gen, h.start, h.start, 0
	return nil
}

// wrap starts the next generation in the other half, which holds the
// generation before the current one. Its entries must be in inner before
// the new header stops naming them; if the flusher has not stored them
// yet, they are stored now.
func (j *Journal) wrap() error {
	j.mu.Lock()
	behind := len(j.pending) > 0 && j.pending[0].Index <= j.prevLast
	j.mu.Unlock()
	if behind {
		if err := j.flush(); err != nil {
			return err
		}
	}
	return j.begin(true)
}

// readHeader returns the newest valid header.
func (j *Journal) readHeader() (journalHeader, bool) {
	var best journalHeader
	found := false
	buf := make([]byte, journalHeaderLen)
	for slot := int64(0); slot < 2; slot++ {
		if _, err := j.f.ReadAt(buf, slot*journalSlotSize); err != nil {
			continue
		}
		h, ok := j.parseHeader(buf)
		if ok && h.gen%2 == uint64(slot) && (!found || h.gen > best.gen) {
			best, found = h, true
		}
	}
	return best, found
}

// parseHeader decodes a header slot of either version, checking that its
// offsets lie inside the file.
func (j *Journal) parseHeader(buf []byte) (journalHeader, bool) {
	switch [8]byte(buf[:8]) {
	case journalMagicV1:
		if crc32.Checksum(buf[:16], crcTable) != binary.BigEndian.Uint32(buf[16:20]) {
			return journalHeader{}, false
		}
		return journalHeader{gen: binary.BigEndian.Uint64(buf[8:16]), start: journalHeaderSize}, true
	case journalMagic:
		if crc32.Checksum(buf[:32], crcTable) != binary.BigEndian.Uint32(buf[32:36]) {
			return journalHeader{}, false
		}
		h := journalHeader{
			gen:   binary.BigEndian.Uint64(buf[8:16]),
			start: int64(binary.BigEndian.Uint64(buf[16:24])),
			prev:  int64(binary.BigEndian.Uint64(buf[24:32])),
		}
		inFile := func(off int64) bool { return off >= journalHeaderSize && off < j.size }
		if !inFile(h.start) || (h.prev != 0 && !inFile(h.prev)) || (h.prev != 0 && h.gen == 0) {
			return journalHeader{}, false
		}
		return h, true
	}
	return journalHeader{}, false
}

// sync makes the journal's data durable. A failed sync is not retried:
// the kernel may have dropped the pages it could not write, so the store
// fails from then on (the member stops; see doc.go).
func (j *Journal) sync() error {
	j.Syncs.Add(1)
	if err := j.f.Datasync(); err != nil {
		return j.broken(fmt.Errorf("storage: journal sync: %w", err))
	}
	return nil
}

// broken records err as the store's error, which every later call
// returns, and returns it.
func (j *Journal) broken(err error) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err == nil {
		j.err = err
	}
	return err
}
