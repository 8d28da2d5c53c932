package storage

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// bolt's file layout, as far as CheckBoltFile reads it (bbolt's
// internal/common/meta.go and page.go; file format version 2, the same
// from bbolt v1.3.5 to v1.5.0): pages 0 and 1 are meta pages, each a
// 16-byte page header and then
//
//	uint32 magic, uint32 version, uint32 pageSize, uint32 flags,
//	root bucket (uint64 page, uint64 sequence), uint64 freelist page,
//	uint64 pgid (pages in use: the file holds at least pgid pages),
//	uint64 txid, uint64 FNV-64a of the 56 bytes before it
//
// in the machine's byte order (little-endian on every platform we build).
// The file may be longer than pgid pages: bolt grows it ahead of use
// (by up to 16 MiB, bbolt's AllocSize, once past that size).
const (
	boltPageHeader = 16
	boltMetaLen    = 64
	boltMagic      = 0xED0CDAED
	boltVersion    = 2
)

// boltMeta is what CheckBoltFile needs of a meta page.
type boltMeta struct {
	pageSize uint32
	pgid     uint64
	txid     uint64
}

// CheckBoltFile checks that the bolt file at path is whole before bolt
// maps it: bolt trusts its meta page and reads the pages it names through
// a memory map, so a truncated file crashes the process with SIGBUS
// instead of failing to open. A missing or empty file passes (bolt
// creates it). A file with no valid meta page, or shorter than its
// newest valid meta page says, is a *CorruptError naming the file and the
// offset at which it falls short.
func CheckBoltFile(path string) error {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("storage: check %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("storage: check %s: %w", path, err)
	}
	size := st.Size()
	if size == 0 {
		return nil
	}
	best, found := newestBoltMeta(f, size)
	if !found {
		return &CorruptError{Path: path, Offset: 0, Reason: fmt.Sprintf(
			"no valid bolt meta page (the file is %d bytes)", size)}
	}
	// Compared in pages: pgid is the file's own word, and pgid*pageSize
	// in bytes can overflow int64 and wrap to a size the file has.
	pages := max(best.pgid, 2)
	if have := uint64(size) / uint64(best.pageSize); have < pages {
		return &CorruptError{Path: path, Offset: size, Reason: fmt.Sprintf(
			"truncated: the file is %d bytes (%d pages of %d bytes), its meta page (transaction %d) says it holds %d pages; "+
				"opening it would crash the process", size, have, best.pageSize, best.txid, pages)}
	}
	return nil
}

// newestBoltMeta is the meta page bolt opens a file of size bytes by:
// the valid one of the two with the higher transaction id. The second
// follows the first at its page size; when the first is not valid, bolt
// (since bbolt v1.3.7) takes the page size from the first valid meta
// page at 1 KiB, 2 KiB, … 16 MiB, and else assumes the OS page size.
func newestBoltMeta(r io.ReaderAt, size int64) (boltMeta, bool) {
	m0, ok0 := readBoltMeta(r, 0)
	pageSize := int64(m0.pageSize)
	if !ok0 {
		pageSize = int64(os.Getpagesize())
		for pos := int64(1 << 10); pos <= 16<<20 && pos < size-1024; pos <<= 1 {
			if m, ok := readBoltMeta(r, pos); ok {
				pageSize = int64(m.pageSize)
				break
			}
		}
	}
	m1, ok1 := readBoltMeta(r, pageSize)
	switch {
	case ok0 && (!ok1 || m0.txid > m1.txid):
		return m0, true
	case ok1:
		return m1, true
	}
	return boltMeta{}, false
}

// readBoltMeta reads and validates the meta page at off.
func readBoltMeta(r io.ReaderAt, off int64) (boltMeta, bool) {
	buf := make([]byte, boltPageHeader+boltMetaLen)
	if _, err := r.ReadAt(buf, off); err != nil {
		return boltMeta{}, false
	}
	b := buf[boltPageHeader:]
	le := binary.LittleEndian
	h := fnv.New64a()
	_, _ = h.Write(b[:56])
	if le.Uint32(b[0:4]) != boltMagic || le.Uint32(b[4:8]) != boltVersion || h.Sum64() != le.Uint64(b[56:64]) {
		return boltMeta{}, false
	}
	m := boltMeta{pageSize: le.Uint32(b[8:12]), pgid: le.Uint64(b[40:48]), txid: le.Uint64(b[48:56])}
	if m.pageSize < 512 || m.pageSize&(m.pageSize-1) != 0 {
		return boltMeta{}, false
	}
	return m, true
}
