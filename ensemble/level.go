package ensemble

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// Ensemble levels gate what members write during a rolling upgrade (etcd's
// cluster version, Kafka's metadata.version). A build knows the levels up
// to its own (BinaryLevel); the ensemble's level is the one its log last
// raised, and a member writes nothing, on the member wire or in the log,
// that a member of the ensemble's level cannot read. Members of levels N
// and N-1 therefore form one working ensemble until the level is raised:
// at formation (an ensemble first formed by this build), or by the
// operator once every member runs the new build (Node.RaiseLevel, zkraft
// upgrade finish). The level never goes down.
//
//	level 1  zkraft v0.1: the 5-byte member header, log entry kinds 1-3,
//	         snapshots without an ensemble section.
//	level 2  zkraft v0.2: the member hello (handshake.go) with the
//	         ensemble id, refused to members of another ensemble and to
//	         level-1 members; log entry kinds 4 (kindEnsemble) and 6
//	         (kindSessionOwnerWide); the snapshot's ensemble section.
const (
	// LevelLegacy is the level of an ensemble whose log never raised one.
	LevelLegacy = 1
	// BinaryLevel is the highest level this build reads and writes.
	BinaryLevel = 2
)

// EnsembleID identifies an ensemble from its formation on (etcd's cluster
// ID): 16 random bytes the first leader at level 2 mints, carried by
// every member connection. The zero value is "none yet".
type EnsembleID [16]byte

// IsZero reports whether the id is unset.
func (id EnsembleID) IsZero() bool { return id == EnsembleID{} }

// String renders the id as a UUID does (8-4-4-4-12 hex digits), "-" when unset.
func (id EnsembleID) String() string {
	if id.IsZero() {
		return "-"
	}
	h := hex.EncodeToString(id[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// newEnsembleID returns a random id.
func newEnsembleID() (EnsembleID, error) {
	var id EnsembleID
	if _, err := rand.Read(id[:]); err != nil {
		return id, fmt.Errorf("ensemble: mint an ensemble id: %w", err)
	}
	return id, nil
}

// ensembleState is what the log says of the ensemble itself: its level,
// and its id with the time (unix ns, the proposer's clock) it was minted.
// Members agree on it as on the tree: it changes only by applying
// kindEnsemble entries, and snapshots carry it.
type ensembleState struct {
	Level  uint8
	ID     EnsembleID
	Minted int64
}

// level is the state's level, LevelLegacy when none was raised.
func (s ensembleState) level() uint8 {
	if s.Level == 0 {
		return LevelLegacy
	}
	return s.Level
}

// raise returns s after applying a kindEnsemble entry: the level only goes
// up, and an id once set is kept (a later entry's is ignored).
func (s ensembleState) raise(level uint8, id EnsembleID, minted int64) ensembleState {
	if level > s.Level {
		s.Level = level
	}
	if s.ID.IsZero() {
		s.ID, s.Minted = id, minted
	}
	return s
}

// errLevelTooHigh is wrapped when the log or a snapshot holds a level this
// build cannot run: the member stops before applying anything of it.
var errLevelTooHigh = errors.New("ensemble: the ensemble runs at a level this zkraft does not know")

// checkLevel refuses a level above BinaryLevel, naming what to run.
func checkLevel(level uint8) error {
	if level > BinaryLevel {
		return fmt.Errorf("%w: level %d (this build runs levels up to %d); run the zkraft version the other members run",
			errLevelTooHigh, level, BinaryLevel)
	}
	return nil
}

// The snapshot's ensemble section follows the tree's trailer (ZEND) in a
// Raft snapshot, and only at level 2 or above:
//
//	"ZKRE" level(1) id(16) minted(8, big-endian) CRC-32 IEEE of those(4)
//
// A level-1 member stops reading at the tree's trailer, so a snapshot
// written at level 1 (without the section) is the one it always read.
const (
	ensembleSectionMagic = "ZKRE"
	ensembleSectionLen   = 4 + 1 + 16 + 8 + 4
)

// writeEnsembleSection appends s's section to w when the level needs one.
func writeEnsembleSection(w io.Writer, s ensembleState) error {
	if s.level() < 2 {
		return nil
	}
	b := make([]byte, 0, ensembleSectionLen)
	b = append(b, ensembleSectionMagic...)
	b = append(b, s.Level)
	b = append(b, s.ID[:]...)
	b = binary.BigEndian.AppendUint64(b, uint64(s.Minted))
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[4:]))
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("ensemble: write the snapshot's ensemble section: %w", err)
	}
	return nil
}

// readEnsembleSection reads the section after a snapshot's tree, if any:
// nothing left is a level-1 snapshot (the zero state).
func readEnsembleSection(r *bufio.Reader) (ensembleState, error) {
	var b [ensembleSectionLen]byte
	n, err := io.ReadFull(r, b[:])
	if n == 0 && errors.Is(err, io.EOF) {
		return ensembleState{}, nil
	}
	if err != nil || string(b[:4]) != ensembleSectionMagic {
		return ensembleState{}, fmt.Errorf("ensemble: snapshot: bad ensemble section (%d bytes after the tree)", n)
	}
	body := b[4 : ensembleSectionLen-4]
	if crc32.ChecksumIEEE(body) != binary.BigEndian.Uint32(b[ensembleSectionLen-4:]) {
		return ensembleState{}, fmt.Errorf("ensemble: snapshot: the ensemble section fails its CRC-32")
	}
	var s ensembleState
	s.Level = body[0]
	copy(s.ID[:], body[1:17])
	s.Minted = int64(binary.BigEndian.Uint64(body[17:25]))
	if err := checkLevel(s.Level); err != nil {
		return ensembleState{}, fmt.Errorf("ensemble: snapshot: %w", err)
	}
	if _, err := r.ReadByte(); err == nil {
		return ensembleState{}, fmt.Errorf("ensemble: snapshot: bytes after the ensemble section")
	}
	return s, nil
}
