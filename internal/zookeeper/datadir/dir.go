package datadir

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Data is the state of a ZooKeeper data directory: its newest readable
// snapshot and the logged transactions after it, in zxid order.
type Data struct {
	// Snapshot is nil when the directory holds none (ZooKeeper then
	// replays its logs onto an empty tree).
	Snapshot     *Snapshot
	SnapshotFile string
	Txns         []Txn
	Logs         []string // the log files read
}

// LastZxid is the zxid of the last transaction in d.
func (d *Data) LastZxid() int64 {
	if len(d.Txns) > 0 {
		return d.Txns[len(d.Txns)-1].Zxid
	}
	if d.Snapshot != nil {
		return d.Snapshot.Zxid
	}
	return 0
}

// Load reads ZooKeeper's dataDir and dataLogDir (the same directory when
// logDir is ""), each either the configured directory or its version-2
// subdirectory. Like ZooKeeper it takes the newest snapshot that parses
// and replays the logs from the one holding the transaction after it.
func Load(dataDir, logDir string) (*Data, error) {
	if logDir == "" {
		logDir = dataDir
	}
	dataDir, logDir = versionDir(dataDir), versionDir(logDir)
	snaps, err := zxidFiles(dataDir, "snapshot.")
	if err != nil {
		return nil, err
	}
	logs, err := zxidFiles(logDir, "log.")
	if err != nil {
		return nil, err
	}
	if len(snaps) == 0 && len(logs) == 0 {
		return nil, fmt.Errorf("datadir: no snapshot.* or log.* files in %s", dataDir)
	}
	d := &Data{}
	var errs []error
	for i := len(snaps) - 1; i >= 0 && d.Snapshot == nil; i-- {
		s, err := readSnapshotFile(snaps[i].path, snaps[i].zxid)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		d.Snapshot, d.SnapshotFile = s, snaps[i].path
	}
	if d.Snapshot == nil && len(snaps) > 0 {
		return nil, fmt.Errorf("datadir: no readable snapshot: %w", errors.Join(errs...))
	}
	last := d.LastZxid()
	// The logs from the last one starting at or before the next zxid.
	from := 0
	for i, l := range logs {
		if l.zxid <= last+1 {
			from = i
		}
	}
	for _, l := range logs[from:] {
		b, err := os.ReadFile(l.path)
		if err != nil {
			return nil, fmt.Errorf("datadir: %w", err)
		}
		err = ReadLog(b, func(t Txn) error {
			if t.Zxid > last {
				d.Txns = append(d.Txns, t)
				last = t.Zxid
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("datadir: %s: %w", l.path, err)
		}
		d.Logs = append(d.Logs, l.path)
	}
	return d, nil
}

// versionDir is dir/version-2 when that exists, else dir.
func versionDir(dir string) string {
	if fi, err := os.Stat(filepath.Join(dir, "version-2")); err == nil && fi.IsDir() {
		return filepath.Join(dir, "version-2")
	}
	return dir
}

type zxidFile struct {
	path string
	zxid int64
}

// zxidFiles lists dir's files named prefix<hex zxid>[.suffix], by zxid.
func zxidFiles(dir, prefix string) ([]zxidFile, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("datadir: %w", err)
	}
	var out []zxidFile
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || e.IsDir() {
			continue
		}
		hex, _, _ := strings.Cut(rest, ".")
		z, err := strconv.ParseUint(hex, 16, 64)
		if err != nil {
			continue
		}
		out = append(out, zxidFile{filepath.Join(dir, e.Name()), int64(z)})
	}
	slices.SortFunc(out, func(a, b zxidFile) int { return cmp.Compare(a.zxid, b.zxid) })
	return out, nil
}

// readSnapshotFile reads a snapshot, decompressing a .gz or .snappy one
// (zookeeper.snapshot.compression.method).
func readSnapshotFile(path string, zxid int64) (*Snapshot, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("datadir: %w", err)
	}
	switch {
	case strings.HasSuffix(path, ".gz"):
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("datadir: %s: %w", path, err)
		}
		if b, err = io.ReadAll(zr); err != nil {
			return nil, fmt.Errorf("datadir: %s: %w", path, err)
		}
	case strings.HasSuffix(path, ".snappy"):
		if b, err = unsnappy(b); err != nil {
			return nil, fmt.Errorf("datadir: %s: %w", path, err)
		}
	}
	s, err := ReadSnapshot(b, zxid)
	if err != nil {
		return nil, fmt.Errorf("datadir: %s: %w", path, err)
	}
	return s, nil
}

// ReadSnapshotFile reads one snapshot file, plain or compressed (.gz,
// .snappy), whose last zxid is zxid; its Adler-32 seal is checked.
func ReadSnapshotFile(path string, zxid int64) (*Snapshot, error) {
	return readSnapshotFile(path, zxid)
}
