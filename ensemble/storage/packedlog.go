package storage

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/hashicorp/raft"
)

// PackedLogStore keeps Raft's log in raft-boltdb with one bolt record per
// append instead of one per entry. raft-boltdb encodes every record with a
// reflection-driven msgpack encoder that builds a fresh codec handle each
// time, and puts each record into bolt's B+tree separately; at tens of
// thousands of writes a second that was 40% of every member's CPU. A pack
// is encoded by hand (packcodec.go) and costs raft-boltdb one encode and
// one Put, however many entries it holds.
//
// A pack is stored as a raft.Log whose Index is the pack's last index, so
// raft-boltdb's LastIndex is exact and the pack holding entry i is the one
// with the smallest key ≥ i. raft-boltdb cannot seek, so entries older than
// this process's appends are found by probing keys i, i+1, … (at most
// packMaxEntries lookups); packs appended since start are indexed in
// memory, and Raft's LogCache in front answers recent entries anyway.
//
// Records written before packs existed (one entry per key) are read as
// one-entry packs, so an older data directory opens unchanged.
//
// Crash safety: an append is one bolt transaction. Truncating a suffix
// inside a pack first stores the shortened pack under its new key and then
// deletes the keys above it; a crash in between leaves the old pack
// beside the shortened one, which hold the same entries below the cut, so
// the log reads as if the truncation had not started, and Raft redoes it.
type PackedLogStore struct {
	inner raft.LogStore

	// Fail, if set, is called with every corrupt pack read (a failed
	// checksum, a pack that does not decode) before the error is
	// returned: Raft panics on a log read error, and the member should
	// stop with the error that names the entry instead.
	Fail func(error)

	// writing serializes StoreLogs and truncations, which share scratch:
	// raft-boltdb copies a record's Data while encoding it, so the buffer
	// is free again once a call returns.
	writing sync.Mutex
	scratch []byte

	mu    sync.Mutex
	first uint64    // first index present; 0 when empty
	last  uint64    // last index present; 0 when empty
	index []packRef // packs appended by this process, ascending
	cache []*pack   // recently decoded packs, newest last
}

// packRef locates one stored pack.
type packRef struct{ first, last uint64 }

const (
	// packMaxEntries bounds a pack, and so the probing for an old entry.
	packMaxEntries = 512
	// packMaxBytes keeps a pack's bolt value moderate: each is one run of
	// contiguous overflow pages, and a log of large entries compacted over
	// and over reuses bolt's freed runs far better at 1 MiB than at 4 MiB
	// (TestPackedLogFileStaysNearItsLiveSize: raft.db 33 against 54 MB).
	packMaxBytes = 1 << 20
	// packScratchMax is the largest encoding buffer kept for the next
	// store: a journal flush stores up to journalFlushBytes at once, and
	// allocating (and zeroing) that much again for every flush of large
	// values cost more than keeping it.
	packScratchMax = 2 * journalFlushBytes
	// packCacheSize is how many decoded packs stay around for GetLog.
	packCacheSize = 4
)

var (
	_ raft.LogStore          = (*PackedLogStore)(nil)
	_ raft.MonotonicLogStore = (*PackedLogStore)(nil)
)

// NewPackedLogStore wraps inner, reading its first and last index.
func NewPackedLogStore(inner raft.LogStore) (*PackedLogStore, error) {
	s := &PackedLogStore{inner: inner}
	last, err := inner.LastIndex()
	if err != nil {
		return nil, fmt.Errorf("storage: log last index: %w", err)
	}
	if last == 0 {
		return s, nil
	}
	firstKey, err := inner.FirstIndex()
	if err != nil {
		return nil, fmt.Errorf("storage: log first index: %w", err)
	}
	p, err := s.read(firstKey)
	if err != nil {
		return nil, fmt.Errorf("storage: read first log pack %d: %w", firstKey, err)
	}
	// The newest pack is the one a torn or damaged file loses first.
	if _, err := s.read(last); err != nil {
		return nil, fmt.Errorf("storage: read last log pack %d: %w", last, err)
	}
	s.first, s.last = p.first, last
	return s, nil
}

// IsMonotonic implements raft.MonotonicLogStore: after installing a
// snapshot Raft empties the log instead of compacting it, so the log never
// has a gap.
func (s *PackedLogStore) IsMonotonic() bool { return true }

// FirstIndex implements raft.LogStore.
func (s *PackedLogStore) FirstIndex() (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.first, nil
}

// LastIndex implements raft.LogStore.
func (s *PackedLogStore) LastIndex() (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last, nil
}

// StoreLog implements raft.LogStore.
func (s *PackedLogStore) StoreLog(l *raft.Log) error {
	return s.StoreLogs([]*raft.Log{l})
}

// StoreLogs implements raft.LogStore: the entries become one or more packs
// written in one bolt transaction.
func (s *PackedLogStore) StoreLogs(logs []*raft.Log) error {
	if len(logs) == 0 {
		return nil
	}
	s.writing.Lock()
	defer s.writing.Unlock()
	// The packs are encoded into one buffer, sized for all of them first:
	// grown pack by pack it was copied again at every growth, a fifth of a
	// leader's CPU under 10 KB values.
	var chunks [][]*raft.Log
	total := 0
	for rest := logs; len(rest) > 0; {
		n, size := 0, 0
		for n < len(rest) && n < packMaxEntries && (n == 0 || size+len(rest[n].Data) <= packMaxBytes) {
			size += len(rest[n].Data) + len(rest[n].Extensions)
			n++
		}
		chunk := rest[:n]
		rest = rest[n:]
		if err := checkConsecutive(chunk); err != nil {
			return err
		}
		chunks = append(chunks, chunk)
		total += packSize(chunk)
	}
	buf := slices.Grow(s.scratch[:0], total)
	records := make([]*raft.Log, 0, len(chunks))
	refs := make([]packRef, 0, len(chunks))
	for _, chunk := range chunks {
		last := chunk[len(chunk)-1]
		start := len(buf)
		buf = appendPack(buf, chunk)
		records = append(records, &raft.Log{Index: last.Index, Term: last.Term, Type: packLogType, Data: buf[start:len(buf):len(buf)]})
		refs = append(refs, packRef{first: chunk[0].Index, last: last.Index})
	}
	err := s.inner.StoreLogs(records)
	if cap(buf) <= packScratchMax {
		s.scratch = buf
	}
	if err != nil {
		return fmt.Errorf("storage: store log pack: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == 0 {
		s.first = refs[0].first
	}
	s.last = refs[len(refs)-1].last
	// Appends follow the last entry, so the index stays sorted; anything
	// at or above a new pack's first index was truncated before it.
	cut := sort.Search(len(s.index), func(i int) bool { return s.index[i].last >= refs[0].first })
	s.index = append(s.index[:cut], refs...)
	return nil
}

// GetLog implements raft.LogStore.
func (s *PackedLogStore) GetLog(idx uint64, out *raft.Log) error {
	s.mu.Lock()
	if s.last == 0 || idx < s.first || idx > s.last {
		s.mu.Unlock()
		return raft.ErrLogNotFound
	}
	for i := len(s.cache) - 1; i >= 0; i-- {
		if p := s.cache[i]; p.contains(idx) {
			*out = p.logs[idx-p.first]
			s.mu.Unlock()
			return nil
		}
	}
	key, known := s.keyFor(idx)
	last := s.last
	s.mu.Unlock()

	var p *pack
	var err error
	if known {
		p, err = s.read(key)
	} else {
		p, err = s.probe(idx, last)
	}
	if err != nil {
		return err
	}
	if !p.contains(idx) {
		return raft.ErrLogNotFound
	}
	*out = p.logs[idx-p.first]
	s.mu.Lock()
	s.remember(p)
	s.mu.Unlock()
	return nil
}

// keyFor returns the key of the indexed pack holding idx.
func (s *PackedLogStore) keyFor(idx uint64) (uint64, bool) {
	i := sort.Search(len(s.index), func(i int) bool { return s.index[i].last >= idx })
	if i < len(s.index) && s.index[i].first <= idx {
		return s.index[i].last, true
	}
	return 0, false
}

// probe finds the pack holding idx among keys idx..idx+packMaxEntries-1.
func (s *PackedLogStore) probe(idx, last uint64) (*pack, error) {
	for k := idx; k <= last && k < idx+packMaxEntries; k++ {
		p, err := s.read(k)
		if errors.Is(err, raft.ErrLogNotFound) {
			continue
		}
		return p, err
	}
	return nil, raft.ErrLogNotFound
}

// read decodes the record stored under key.
func (s *PackedLogStore) read(key uint64) (*pack, error) {
	var rec raft.Log
	if err := s.inner.GetLog(key, &rec); err != nil {
		return nil, err
	}
	p, err := decodeRecord(&rec)
	if err != nil {
		err = fmt.Errorf("storage: %s: %w", LogStoreFile, err)
		if s.Fail != nil {
			s.Fail(err)
		}
		return nil, err
	}
	return p, nil
}

// remember caches a decoded pack, evicting the oldest.
func (s *PackedLogStore) remember(p *pack) {
	if len(s.cache) == packCacheSize {
		copy(s.cache, s.cache[1:])
		s.cache = s.cache[:packCacheSize-1]
	}
	s.cache = append(s.cache, p)
}

// DeleteRange implements raft.LogStore. Raft deletes a prefix (compaction),
// a suffix (a follower's conflicting entries) or everything; a pack that
// straddles a prefix's end keeps its older entries until it is deleted
// whole, and one that straddles a suffix's start is rewritten.
func (s *PackedLogStore) DeleteRange(min, max uint64) error {
	s.mu.Lock()
	first, last := s.first, s.last
	if last == 0 || max < first || min > last || max < min {
		s.mu.Unlock()
		return nil
	}
	s.cache = nil
	switch {
	case min <= first && max >= last:
		s.first, s.last, s.index = 0, 0, nil
		s.mu.Unlock()
		return s.deleteKeys(first, max)
	case min <= first:
		// A prefix: packs ending at or below max go; the one straddling
		// max keeps its older entries, which FirstIndex no longer reports.
		s.first = max + 1
		cut := sort.Search(len(s.index), func(i int) bool { return s.index[i].last > max })
		s.index = append(s.index[:0:0], s.index[cut:]...)
		s.mu.Unlock()
		return s.deleteKeys(first, max)
	case max >= last:
		s.mu.Unlock()
		return s.truncate(min, last)
	default:
		s.mu.Unlock()
		return fmt.Errorf("storage: delete log %d-%d from the middle of %d-%d", min, max, first, last)
	}
}

// truncate deletes entries min..last, rewriting the pack that holds min
// when it also holds older entries.
func (s *PackedLogStore) truncate(min, last uint64) error {
	s.writing.Lock()
	defer s.writing.Unlock()
	var ref packRef
	var p *pack
	var err error
	s.mu.Lock()
	key, known := s.keyFor(min)
	s.mu.Unlock()
	if known {
		p, err = s.read(key)
	} else {
		p, err = s.probe(min, last)
	}
	if err != nil && !errors.Is(err, raft.ErrLogNotFound) {
		return fmt.Errorf("storage: truncate log at %d: %w", min, err)
	}
	if p != nil && p.first < min && p.contains(min) {
		kept := p.logs[:min-p.first]
		head := make([]*raft.Log, len(kept))
		for i := range kept {
			head[i] = &kept[i]
		}
		rec := &raft.Log{Index: min - 1, Term: kept[len(kept)-1].Term, Type: packLogType, Data: encodePack(head)}
		if err := s.inner.StoreLogs([]*raft.Log{rec}); err != nil {
			return fmt.Errorf("storage: rewrite log pack %d-%d: %w", p.first, min-1, err)
		}
		ref = packRef{first: p.first, last: min - 1}
	}
	if err := s.deleteKeys(min, last); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last = min - 1
	if s.last < s.first {
		s.first, s.last = 0, 0
	}
	cut := sort.Search(len(s.index), func(i int) bool { return s.index[i].last >= min })
	s.index = s.index[:cut]
	if ref.last != 0 {
		cut = sort.Search(len(s.index), func(i int) bool { return s.index[i].last >= ref.first })
		s.index = append(s.index[:cut], ref)
	}
	return nil
}

// deleteKeys deletes the records with keys min..max.
func (s *PackedLogStore) deleteKeys(min, max uint64) error {
	if err := s.inner.DeleteRange(min, max); err != nil {
		return fmt.Errorf("storage: delete log packs %d-%d: %w", min, max, err)
	}
	return nil
}
