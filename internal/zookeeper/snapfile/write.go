package snapfile

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash"
	"os"
	"path/filepath"

	"github.com/zkraft/zkraft/internal/zookeeper/datadir"
)

// Writer writes a snapshot file atomically: into a temporary file beside
// the destination, which Finish syncs and renames into place (and the
// directory synced), so the destination is either absent, the old file,
// or the whole new one. Write the ZooKeeper snapshot through Write, check
// it with Verify, then Finish, or Abort.
type Writer struct {
	path string
	tmp  *os.File
	sum  hash.Hash
	body int64 // snapshot bytes written
}

// Create starts a snapshot file that Finish will put at path.
func Create(path string) (*Writer, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("snapfile: %w", err)
	}
	w := &Writer{path: path, tmp: tmp, sum: sha256.New()}
	if err := w.put([]byte(Magic)); err != nil {
		w.Abort()
		return nil, err
	}
	return w, nil
}

// Write appends snapshot bytes.
func (w *Writer) Write(p []byte) (int, error) {
	if err := w.put(p); err != nil {
		return 0, err
	}
	w.body += int64(len(p))
	return len(p), nil
}

func (w *Writer) put(p []byte) error {
	if _, err := w.tmp.Write(p); err != nil {
		return fmt.Errorf("snapfile: write %s: %w", w.tmp.Name(), err)
	}
	w.sum.Write(p)
	return nil
}

// SnapshotBytes is how many snapshot bytes were written.
func (w *Writer) SnapshotBytes() int64 { return w.body }

// Verify reads the snapshot written so far back from the disk and parses
// it, its Adler-32 seal included; zxid is its last zxid.
func (w *Writer) Verify(zxid int64) (*datadir.Snapshot, error) {
	b := make([]byte, w.body)
	if _, err := w.tmp.ReadAt(b, int64(len(Magic))); err != nil {
		return nil, fmt.Errorf("snapfile: read back %s: %w", w.tmp.Name(), err)
	}
	s, err := datadir.ReadSnapshot(b, zxid)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return s, nil
}

// Finish writes meta and the digest, syncs the file, and renames it into
// place.
func (w *Writer) Finish(meta Meta) error {
	meta.SnapshotBytes = w.body
	js, err := json.Marshal(meta)
	if err != nil {
		w.Abort()
		return fmt.Errorf("snapfile: %w", err)
	}
	if err := w.put(binary.BigEndian.AppendUint32(js, uint32(len(js)))); err != nil {
		w.Abort()
		return err
	}
	if _, err := w.tmp.Write(w.sum.Sum(nil)); err != nil {
		w.Abort()
		return fmt.Errorf("snapfile: write %s: %w", w.tmp.Name(), err)
	}
	if err := w.tmp.Sync(); err != nil {
		w.Abort()
		return fmt.Errorf("snapfile: sync %s: %w", w.tmp.Name(), err)
	}
	if err := w.tmp.Close(); err != nil {
		_ = os.Remove(w.tmp.Name())
		return fmt.Errorf("snapfile: %w", err)
	}
	if err := os.Rename(w.tmp.Name(), w.path); err != nil {
		_ = os.Remove(w.tmp.Name())
		return fmt.Errorf("snapfile: %w", err)
	}
	return syncDir(filepath.Dir(w.path))
}

// Abort removes the temporary file.
func (w *Writer) Abort() {
	_ = w.tmp.Close()
	_ = os.Remove(w.tmp.Name())
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("snapfile: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("snapfile: sync %s: %w", dir, err)
	}
	return nil
}

// WriteFile writes a whole snapshot file at once: snap is a ZooKeeper
// snapshot's bytes. Tests and tools use it; save streams through Writer.
func WriteFile(path string, snap []byte, meta Meta) error {
	w, err := Create(path)
	if err != nil {
		return err
	}
	if _, err := w.Write(snap); err != nil {
		w.Abort()
		return err
	}
	return w.Finish(meta)
}
