package ensemble

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/ensemble/storage"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// writeAndSnapshot creates a session and n nodes, taking a snapshot after
// each half, and returns the nodes' paths.
func writeAndSnapshot(t *testing.T, node *Node, n int) []string {
	t.Helper()
	if _, err := node.ProposeWait(&znode.Txn{Type: jute.OpCreateSession, Session: 3, Time: 1, Timeout: 10000, Passwd: make([]byte, 16)}); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for i := 0; i < n; i++ {
		p := fmt.Sprintf("/n%03d", i)
		if res, err := node.ProposeWait(createTxn(3, p, 0, int64(i))); err != nil || res.Err != jute.OK {
			t.Fatalf("create %s: %v %v", p, err, res)
		}
		paths = append(paths, p)
		if i == n/2 || i == n-1 {
			if err := node.Snapshot(); err != nil {
				t.Fatal(err)
			}
		}
	}
	return paths
}

// newestSnapshot is the directory of the member's newest snapshot.
func newestSnapshot(t *testing.T, dataDir string) string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dataDir, "snapshots"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasSuffix(e.Name(), ".tmp") {
			names = append(names, e.Name())
		}
	}
	if len(names) < 2 {
		t.Fatalf("snapshots %v, want two", names)
	}
	sort.Slice(names, func(i, j int) bool { // term-index-time: all numbers
		var a, b [3]uint64
		fmt.Sscanf(names[i], "%d-%d-%d", &a[0], &a[1], &a[2])
		fmt.Sscanf(names[j], "%d-%d-%d", &b[0], &b[1], &b[2])
		return a[0] > b[0] || a[0] == b[0] && (a[1] > b[1] || a[1] == b[1] && a[2] > b[2])
	})
	return filepath.Join(dataDir, "snapshots", names[0])
}

// TestMemberRefusesADamagedNewestSnapshot: a member whose newest snapshot
// is damaged does not start, and says which file; it used to start from
// the older snapshot with only a log line from Raft.
func TestMemberRefusesADamagedNewestSnapshot(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir, func(c *Config) { c.SnapshotThreshold = 1 << 20 })
	writeAndSnapshot(t, n, 40)
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(newestSnapshot(t, dir), "state.bin")
	f, err := os.OpenFile(state, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, 20); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if _, err := f.WriteAt(b, 20); err != nil {
		t.Fatal(err)
	}
	f.Close()

	n, err = Open(Config{DataDir: dir, TickTime: 100 * time.Millisecond})
	if err == nil {
		n.Close()
		t.Fatal("a member with a damaged newest snapshot started")
	}
	if !errors.Is(err, storage.ErrCorrupt) || !strings.Contains(err.Error(), state) {
		t.Fatalf("error %v does not name %s", err, state)
	}
}

// TestMemberRefusesATruncatedRaftDB: a member whose raft.db was cut short
// refuses to start naming it; bolt used to map the missing pages and
// crash the process with SIGBUS.
func TestMemberRefusesATruncatedRaftDB(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir, func(c *Config) { c.SnapshotThreshold = 1 << 20 })
	writeAndSnapshot(t, n, 200)
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, storage.LogStoreFile)
	// Cut it to half the pages bolt uses. Half the file is not enough:
	// since bbolt v1.3.7 the file runs up to 16 MiB (sparse) past the
	// pages in use, and half of it could keep every one of them.
	used := boltPagesInUse(t, db)
	if err := os.Truncate(db, used/2&^4095); err != nil {
		t.Fatal(err)
	}
	n, err := Open(Config{DataDir: dir, TickTime: 100 * time.Millisecond})
	if err == nil {
		n.Close()
		t.Fatalf("a member with a truncated raft.db started (cut to %d of the %d bytes in use)", used/2&^4095, used)
	}
	if !errors.Is(err, storage.ErrCorrupt) || !strings.Contains(err.Error(), db) {
		t.Fatalf("error %v does not name %s", err, db)
	}
}

// boltPagesInUse returns the bytes below bolt's high-water mark in the
// file at path: the newest valid meta page's page id times its page size
// (bolt's meta layout: a 16-byte page header, then magic, version, page
// size, flags, root bucket (16), freelist page, high-water page, txid).
func boltPagesInUse(t *testing.T, path string) int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	meta := func(off int) (pgid, txid uint64, pageSize uint32, ok bool) {
		if off+16+64 > len(b) || le.Uint32(b[off+16:]) != 0xED0CDAED {
			return 0, 0, 0, false
		}
		m := b[off+16:]
		return le.Uint64(m[40:]), le.Uint64(m[48:]), le.Uint32(m[8:]), true
	}
	pg0, tx0, size, ok0 := meta(0)
	if !ok0 {
		t.Fatal("raft.db: no meta page at 0")
	}
	best, bestTx := pg0, tx0
	if pg1, tx1, _, ok1 := meta(int(size)); ok1 && tx1 > bestTx {
		best = pg1
	}
	return int64(best) * int64(size)
}
