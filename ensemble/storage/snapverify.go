package storage

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"hash/crc64"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Checking the newest snapshot before Raft restores it.
//
// hashicorp/raft's file store writes each snapshot's CRC-64 (ECMA) and
// size into its meta.json and checks them when the snapshot is opened.
// But on start Raft skips a snapshot whose meta.json does not read and,
// when the newest one fails to open, restores the next older one with
// only a log line: the member comes up on an older state without a word
// (and, once its log is compacted past that snapshot, without the writes
// in between). Verify makes that a refusal.

// Names of a file snapshot's files (raft's file_snapshot.go).
const (
	snapMetaFile  = "meta.json"
	snapStateFile = "state.bin"
	snapTmpSuffix = ".tmp"
)

// snapMeta is the part of raft's meta.json that Verify reads.
type snapMeta struct {
	ID    string
	Index uint64
	Term  uint64
	Size  int64
	CRC   []byte
}

// Verify checks the newest snapshot in the store, the one Raft restores
// on start: its meta.json must decode and name it, and its state.bin
// must have the size and CRC-64 the meta records. Any failure is a
// *CorruptError naming the file; older snapshots are not read (Raft does
// not fall back to them: this refusal stops it first). Verify reads the
// whole state once.
func (s *OrderedSnapshots) Verify() error {
	ids, err := snapshotIDs(s.dir)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	return verifySnapshot(filepath.Join(s.dir, ids[0]))
}

// snapshotIDs lists the completed snapshots in dir, newest first (by
// term, index and time, the fields of raft's snapshot names).
func snapshotIDs(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("storage: list snapshots: %w", err)
	}
	type named struct {
		id  string
		key [3]uint64
	}
	var snaps []named
	for _, e := range entries {
		if !e.IsDir() || strings.HasSuffix(e.Name(), snapTmpSuffix) {
			continue
		}
		parts := strings.Split(e.Name(), "-")
		var key [3]uint64
		ok := len(parts) == 3
		for i := 0; ok && i < 3; i++ {
			key[i], err = strconv.ParseUint(parts[i], 10, 64)
			ok = err == nil
		}
		if !ok {
			continue // not a snapshot of raft's naming: raft ignores it too
		}
		snaps = append(snaps, named{e.Name(), key})
	}
	sort.Slice(snaps, func(i, j int) bool {
		a, b := snaps[i].key, snaps[j].key
		for k := range a {
			if a[k] != b[k] {
				return a[k] > b[k]
			}
		}
		return false
	})
	ids := make([]string, len(snaps))
	for i, sn := range snaps {
		ids[i] = sn.id
	}
	return ids, nil
}

// verifySnapshot checks one snapshot directory.
func verifySnapshot(dir string) error {
	metaPath, statePath := filepath.Join(dir, snapMetaFile), filepath.Join(dir, snapStateFile)
	raw, err := os.ReadFile(metaPath)
	if err != nil {
		return &CorruptError{Path: metaPath, Offset: -1, Reason: fmt.Sprintf("the newest snapshot's meta cannot be read: %v", err)}
	}
	var m snapMeta
	if err := json.Unmarshal(raw, &m); err != nil {
		return &CorruptError{Path: metaPath, Offset: -1, Reason: fmt.Sprintf("the newest snapshot's meta does not decode: %v", err)}
	}
	if m.ID != filepath.Base(dir) || len(m.CRC) != 8 {
		return &CorruptError{Path: metaPath, Offset: -1, Reason: fmt.Sprintf(
			"the newest snapshot's meta names snapshot %q and has a %d-byte checksum", m.ID, len(m.CRC))}
	}
	f, err := os.Open(statePath)
	if err != nil {
		return &CorruptError{Path: statePath, Offset: -1, Reason: fmt.Sprintf("the newest snapshot's state cannot be read: %v", err)}
	}
	defer f.Close()
	h := crc64.New(crc64.MakeTable(crc64.ECMA))
	n, err := io.Copy(h, bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return &CorruptError{Path: statePath, Offset: n, Reason: fmt.Sprintf("the newest snapshot's state cannot be read: %v", err)}
	}
	if n != m.Size {
		return &CorruptError{Path: statePath, Offset: min(n, m.Size), Reason: fmt.Sprintf(
			"the newest snapshot's state is %d bytes, its meta says %d", n, m.Size)}
	}
	if !bytes.Equal(h.Sum(nil), m.CRC) {
		return &CorruptError{Path: statePath, Offset: -1, Reason: fmt.Sprintf(
			"the newest snapshot's state fails its CRC-64 (snapshot %s, index %d, term %d)", m.ID, m.Index, m.Term)}
	}
	return nil
}
