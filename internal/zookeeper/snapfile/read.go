package snapfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/zkraft/zkraft/internal/zookeeper/datadir"
)

// Kind says what a file read was.
type Kind string

// The kinds of file Read accepts.
const (
	KindZkraft    Kind = "zkraft"    // written by zkraft snapshot save
	KindZooKeeper Kind = "zookeeper" // an Apache ZooKeeper snapshot.<zxid>
)

// File is a snapshot file read and checked.
type File struct {
	Kind     Kind
	Meta     Meta
	Snapshot *datadir.Snapshot
	// Digest is the SHA-256 a zkraft file ends with (zero for a
	// ZooKeeper file): what it is, alone. A restore derives the session
	// passwords from it, so every member restoring the file agrees.
	Digest [sha256.Size]byte
	// Body is the Apache ZooKeeper snapshot a zkraft file holds, as the
	// member sent it (nil for a ZooKeeper file): what a ZooKeeper server
	// loads from dataDir/version-2/snapshot.<zxid in hex>.
	Body []byte
}

// zkMagic opens an Apache ZooKeeper snapshot ("ZKSN").
var zkMagic = []byte("ZKSN")

// Read reads and checks the snapshot file at path: a zkraft one (digest,
// lengths, ZooKeeper's seal, the counts its Meta states) or a ZooKeeper
// one, plain or compressed (its seal; the zxid from its name
// snapshot.<zxid>, else the newest zxid its nodes carry).
func Read(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("snapfile: %w", err)
	}
	if bytes.HasPrefix(b, []byte(Magic)) {
		f, err := parse(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return f, nil
	}
	if bytes.HasPrefix(b, []byte(Magic[:len(Magic)-1])) {
		return nil, fmt.Errorf("%w: %s: format %q, this zkraft reads %q", ErrCorrupt, path, b[len(Magic)-1], Magic[len(Magic)-1])
	}
	compressed := strings.HasSuffix(path, ".gz") || strings.HasSuffix(path, ".snappy")
	if !compressed && !bytes.HasPrefix(b, zkMagic) {
		return nil, fmt.Errorf("%w: %s is neither a zkraft snapshot (%q) nor a ZooKeeper one (%q)", ErrCorrupt, path, Magic, zkMagic)
	}
	return readZooKeeper(path)
}

// parse checks and decodes a zkraft snapshot file's bytes.
func parse(b []byte) (*File, error) {
	const tail = 4 + sha256.Size
	if len(b) < len(Magic)+tail {
		return nil, fmt.Errorf("%w: %d bytes, too short to hold a snapshot (truncated?)", ErrCorrupt, len(b))
	}
	end := len(b) - sha256.Size
	if sum := sha256.Sum256(b[:end]); !bytes.Equal(sum[:], b[end:]) {
		return nil, fmt.Errorf("%w: SHA-256 %x, the file says %x (damaged or truncated)", ErrCorrupt, sum, b[end:])
	}
	n := int(binary.BigEndian.Uint32(b[end-4 : end]))
	if n > end-4-len(Magic) {
		return nil, fmt.Errorf("%w: metadata of %d bytes in a file of %d", ErrCorrupt, n, len(b))
	}
	f := &File{Kind: KindZkraft}
	if err := json.Unmarshal(b[end-4-n:end-4], &f.Meta); err != nil {
		return nil, fmt.Errorf("%w: metadata: %w", ErrCorrupt, err)
	}
	body := b[len(Magic) : end-4-n]
	if int64(len(body)) != f.Meta.SnapshotBytes {
		return nil, fmt.Errorf("%w: %d snapshot bytes, the file says %d", ErrCorrupt, len(body), f.Meta.SnapshotBytes)
	}
	s, err := datadir.ReadSnapshot(body, int64(f.Meta.Zxid))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if len(s.Nodes) != f.Meta.Znodes || len(s.Sessions) != f.Meta.Sessions {
		return nil, fmt.Errorf("%w: %d znodes and %d sessions, the file says %d and %d", ErrCorrupt,
			len(s.Nodes), len(s.Sessions), f.Meta.Znodes, f.Meta.Sessions)
	}
	f.Snapshot = s
	f.Body = body
	copy(f.Digest[:], b[end:])
	return f, nil
}

// readZooKeeper reads an Apache ZooKeeper snapshot file.
func readZooKeeper(path string) (*File, error) {
	zxid := nameZxid(path)
	s, err := datadir.ReadSnapshotFile(path, zxid)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if zxid < 0 {
		zxid = 0
		for _, n := range s.Nodes {
			zxid = max(zxid, n.Stat.Czxid, n.Stat.Mzxid, n.Stat.Pzxid)
		}
		s.Zxid = zxid
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("snapfile: %w", err)
	}
	return &File{Kind: KindZooKeeper, Snapshot: s, Meta: Meta{
		Zxid: Zxid(zxid), Znodes: len(s.Nodes), Sessions: len(s.Sessions), SnapshotBytes: fi.Size(),
	}}, nil
}

// nameZxid is the zxid of a file named snapshot.<hex>[.suffix], -1 for
// another name.
func nameZxid(path string) int64 {
	rest, ok := strings.CutPrefix(filepath.Base(path), "snapshot.")
	if !ok {
		return -1
	}
	hex, _, _ := strings.Cut(rest, ".")
	z, err := strconv.ParseInt(hex, 16, 64)
	if err != nil {
		return -1
	}
	return z
}
