package ensemble

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/zkraft/zkraft/ensemble/storage"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// present reports which of names exist in dir.
func present(dir string, names ...string) map[string]bool {
	out := map[string]bool{}
	for _, n := range names {
		_, err := os.Stat(filepath.Join(dir, n))
		out[n] = err == nil
	}
	return out
}

// writeSome creates a session and n znodes and returns the last zxid.
func writeSome(t *testing.T, n *Node, session int64, names ...string) int64 {
	t.Helper()
	if _, ok := func() (znode.SessionInfo, bool) {
		tr := n.RLockTree()
		defer n.RUnlockTree()
		return tr.Session(session)
	}(); !ok {
		if _, err := n.ProposeWait(&znode.Txn{Type: jute.OpCreateSession, Session: session, Time: 1, Timeout: 30000, Passwd: make([]byte, 16)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range names {
		if res, err := n.ProposeWait(createTxn(session, p, 0, 2)); err != nil || res.Err != jute.OK {
			t.Fatalf("create %s: %v %v", p, err, res)
		}
	}
	return n.LastZxid()
}

// hasNodes checks that every path exists in n's tree.
func hasNodes(t *testing.T, n *Node, paths ...string) {
	t.Helper()
	tr := n.RLockTree()
	defer n.RUnlockTree()
	for _, p := range paths {
		if _, err := tr.Exists(p, nil); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// TestLogDir: with a log directory (zoo.cfg dataLogDir) the log and its
// journal are written there and the snapshots stay in the data directory;
// a restart finds everything acknowledged, snapshot and log alike.
func TestLogDir(t *testing.T) {
	data, logs := t.TempDir(), t.TempDir()
	withLogDir := func(c *Config) { c.LogDir, c.SnapshotThreshold = logs, 20 }
	n := openNode(t, data, withLogDir)
	if n.LogDir() != logs {
		t.Errorf("LogDir() = %s, want %s", n.LogDir(), logs)
	}
	var paths []string
	for i := 0; i < 60; i++ {
		paths = append(paths, "/n"+string(rune('a'+i%26))+string(rune('a'+i/26)))
	}
	last := writeSome(t, n, 5, paths...)
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if got := present(logs, storage.LogStoreFile, storage.JournalFile, storage.SnapshotsDir); !got[storage.LogStoreFile] || !got[storage.JournalFile] || got[storage.SnapshotsDir] {
		t.Errorf("log dir holds %v, want the log and journal only", got)
	}
	if got := present(data, storage.LogStoreFile, storage.JournalFile, storage.SnapshotsDir); got[storage.LogStoreFile] || got[storage.JournalFile] || !got[storage.SnapshotsDir] {
		t.Errorf("data dir holds %v, want the snapshots only", got)
	}
	m := openNode(t, data, withLogDir)
	defer m.Close()
	if m.LastZxid() < last {
		t.Errorf("after restart last zxid %d < %d", m.LastZxid(), last)
	}
	hasNodes(t, m, paths...)
}

// TestLogDirKeepsExistingLog: a member whose log is in its data directory
// from before a log directory was configured goes on using it there
// instead of starting empty; with a log in both it refuses to start.
func TestLogDirKeepsExistingLog(t *testing.T) {
	data, logs := t.TempDir(), t.TempDir()
	n := openNode(t, data)
	last := writeSome(t, n, 5, "/before")
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	m := openNode(t, data, func(c *Config) { c.LogDir = logs })
	if m.LogDir() != data {
		t.Errorf("LogDir() = %s, want the data dir %s that holds the log", m.LogDir(), data)
	}
	if m.LastZxid() < last {
		t.Errorf("last zxid %d < %d: the old log was not used", m.LastZxid(), last)
	}
	writeSome(t, m, 5, "/after")
	hasNodes(t, m, "/before", "/after")
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if got := present(logs, storage.LogStoreFile, storage.JournalFile); got[storage.LogStoreFile] || got[storage.JournalFile] {
		t.Errorf("a second log was started in the log dir: %v", got)
	}

	// A log in both places: which is current is unknown.
	other := openNode(t, t.TempDir(), func(c *Config) { c.LogDir = logs })
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(Config{DataDir: data, LogDir: logs}); !errors.Is(err, ErrLogDirConflict) {
		t.Fatalf("open with a log in both dirs: %v, want ErrLogDirConflict", err)
	}
}

// TestSeedLogDir: Seed writes the stable store into the log directory and
// refuses a log directory that already holds a log.
func TestSeedLogDir(t *testing.T) {
	data, logs := t.TempDir(), t.TempDir()
	tree := znode.NewTree(znode.Options{})
	if r := tree.Apply(&znode.Txn{Type: jute.OpCreateSession, Session: 7, Time: 1, Timeout: 30000, Passwd: make([]byte, 16)}, 600); r.Err != jute.OK {
		t.Fatal(r.Err)
	}
	if r := tree.Apply(createTxn(7, "/seeded", 0, 1), 700); r.Err != jute.OK {
		t.Fatal(r.Err)
	}
	cfg := Config{DataDir: data, LogDir: logs}
	if err := Seed(cfg, tree, 800); err != nil {
		t.Fatal(err)
	}
	if got := present(logs, storage.LogStoreFile); !got[storage.LogStoreFile] {
		t.Errorf("no raft.db in the log dir after Seed")
	}
	if got := present(data, storage.LogStoreFile, storage.SnapshotsDir); got[storage.LogStoreFile] || !got[storage.SnapshotsDir] {
		t.Errorf("data dir after Seed: %v, want the snapshot only", got)
	}
	if err := Seed(Config{DataDir: t.TempDir(), LogDir: logs}, tree, 800); !errors.Is(err, ErrHasState) {
		t.Errorf("seed over a log dir with a log: %v, want ErrHasState", err)
	}
	n := openNode(t, data, func(c *Config) { c.LogDir = logs })
	defer n.Close()
	if n.LastZxid() != 800 {
		t.Errorf("last zxid %d, want 800", n.LastZxid())
	}
	hasNodes(t, n, "/seeded")
}
