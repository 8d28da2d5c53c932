package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/hashicorp/raft"
	"go.uber.org/zap"
)

// Reading a generation's records on open, and telling a torn tail (cut)
// from damage in the middle (refused).
//
// Records are written one pwrite and one fdatasync at a time, so after a
// crash only the last record of a generation can be incomplete, and
// nothing of that generation lies after it. A bad record with a valid
// record of its generation after it therefore is not a crash's doing: the
// records after it were acknowledged, and replaying only up to it would
// drop them without a word. (With forceSync=no the page cache may write
// records out of order, so a crash can look like that too; refusing is
// still the safe answer there.)

// scan reads the records of generation gen from offset start, in order,
// up to the end of the generation. Wherever reading stops (zeros, a record
// of another generation, a bad record), a valid record of gen further on
// means the stop is damage: a *CorruptError naming the offset. Otherwise
// it is the generation's end, and a bad record of gen there is a torn
// tail, cut and logged.
func (j *Journal) scan(gen uint64, start int64) ([]*raft.Log, error) {
	var logs []*raft.Log
	for off := start; off+journalRecordHead <= j.size; {
		p, n, why := j.readRecord(gen, off)
		if p == nil {
			return logs, j.endAt(gen, off, why, len(logs))
		}
		if len(logs) > 0 && p.first != logs[len(logs)-1].Index+1 {
			return nil, &CorruptError{Path: j.path, Offset: off, Reason: fmt.Sprintf(
				"journal record starts at entry %d after %d", p.first, logs[len(logs)-1].Index)}
		}
		for i := range p.logs {
			logs = append(logs, &p.logs[i])
		}
		off += journalRecordHead + n
	}
	return logs, nil
}

// endAt decides what the end of generation gen's records at off is: nil
// for the clean end or a torn tail (logged when why is set), a
// *CorruptError when a valid record of gen follows. It reads the rest of
// the file once per generation opened.
func (j *Journal) endAt(gen uint64, off int64, why string, kept int) error {
	if next, found := j.findRecord(gen, off+1); found {
		if why == "" {
			why = "is missing (zeros or another generation's bytes)"
		}
		return &CorruptError{Path: j.path, Offset: off, Reason: fmt.Sprintf(
			"journal record of generation %d %s, and a valid record of that generation follows at byte offset %d, "+
				"so acknowledged writes after it would be lost", gen, why, next)}
	}
	if why != "" {
		j.log.Warn("the journal ends with an incomplete record (never acknowledged): cut",
			zap.String("file", j.path), zap.Int64("offset", off), zap.String("reason", why),
			zap.Uint64("generation", gen), zap.Int("entriesKept", kept))
	}
	return nil
}

// readRecord reads the record at off, expected of generation gen: its
// pack and payload length when valid; else nil and, when the bytes there
// claim generation gen (a torn or damaged record of it), why it is bad.
func (j *Journal) readRecord(gen uint64, off int64) (*pack, int64, string) {
	head := make([]byte, journalRecordHead)
	if _, err := j.f.ReadAt(head, off); err != nil {
		return nil, 0, fmt.Sprintf("cannot be read: %v", err)
	}
	n := int64(binary.BigEndian.Uint32(head[0:4]))
	ours := binary.BigEndian.Uint64(head[8:16]) == gen
	bad := func(why string) (*pack, int64, string) {
		if !ours {
			return nil, 0, "" // zeros, or an older generation's leftovers
		}
		return nil, 0, why
	}
	if n == 0 || off+journalRecordHead+n > j.size {
		return bad(fmt.Sprintf("has length %d, past the end of the file", n))
	}
	payload := make([]byte, n)
	if _, err := j.f.ReadAt(payload, off+journalRecordHead); err != nil && err != io.EOF {
		return nil, 0, fmt.Sprintf("cannot be read: %v", err)
	}
	crc := crc32.Update(crc32.Checksum(head[8:16], crcTable), crcTable, payload)
	if crc != binary.BigEndian.Uint32(head[4:8]) {
		return bad("fails its checksum")
	}
	if !ours {
		return bad("")
	}
	p, err := decodeJournalPack(payload)
	if err != nil {
		return nil, 0, fmt.Sprintf("does not decode: %v", err)
	}
	return p, n, ""
}

// findRecord looks for a valid record of generation gen at or after
// offset from (at any byte offset: the damage may have hit a length).
func (j *Journal) findRecord(gen uint64, from int64) (int64, bool) {
	if from >= j.size {
		return 0, false
	}
	buf := make([]byte, j.size-from)
	n, err := j.f.ReadAt(buf, from)
	if err != nil && err != io.EOF {
		return 0, false
	}
	buf = buf[:n]
	var pattern [8]byte
	binary.BigEndian.PutUint64(pattern[:], gen)
	for i := 0; ; {
		k := bytes.Index(buf[i:], pattern[:])
		if k < 0 {
			return 0, false
		}
		at := i + k - 8 // the generation is at bytes 8-16 of a record's head
		i += k + 1
		if at < 0 || at+journalRecordHead > len(buf) {
			continue
		}
		size := int(binary.BigEndian.Uint32(buf[at : at+4]))
		if size == 0 || at+journalRecordHead+size > len(buf) {
			continue
		}
		payload := buf[at+journalRecordHead : at+journalRecordHead+size]
		crc := crc32.Update(crc32.Checksum(buf[at+8:at+16], crcTable), crcTable, payload)
		if crc != binary.BigEndian.Uint32(buf[at+4:at+8]) {
			continue
		}
		if _, err := decodeJournalPack(payload); err != nil {
			continue
		}
		return from + int64(at), true
	}
}

// checkedHeader returns the newest valid header, as readHeader, and
// refuses a damaged header slot that would have been newer: a slot that
// is neither zeros nor a valid header while valid records of the
// generation after the chosen one exist (a torn header write, with no
// such records, loses nothing and is only logged). With no valid header
// at all, the journal must be new (both slots zeros).
func (j *Journal) checkedHeader() (journalHeader, bool, error) {
	h, ok := j.readHeader()
	buf := make([]byte, journalSlotSize)
	for slot := int64(0); slot < 2; slot++ {
		if _, err := j.f.ReadAt(buf, slot*journalSlotSize); err != nil {
			return journalHeader{}, false, fmt.Errorf("storage: read journal header: %w", err)
		}
		if bytes.Equal(buf, make([]byte, journalSlotSize)) {
			continue
		}
		if sh, valid := j.parseHeader(buf[:journalHeaderLen]); valid && sh.gen%2 == uint64(slot) {
			continue
		}
		if !ok {
			return journalHeader{}, false, &CorruptError{Path: j.path, Offset: slot * journalSlotSize,
				Reason: "no journal header is valid"}
		}
		if uint64(slot) != (h.gen+1)%2 {
			continue // the chosen header's own slot holds it
		}
		if next, found := j.findRecord(h.gen+1, journalHeaderSize); found {
			return journalHeader{}, false, &CorruptError{Path: j.path, Offset: slot * journalSlotSize, Reason: fmt.Sprintf(
				"the journal header of generation %d is damaged and its records (from byte offset %d) would be lost",
				h.gen+1, next)}
		}
		j.log.Warn("a journal header slot is damaged (a torn header write): using the other",
			zap.String("file", j.path), zap.Int64("offset", slot*journalSlotSize), zap.Uint64("generation", h.gen))
	}
	return h, ok, nil
}
