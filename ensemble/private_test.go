package ensemble

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// TestMemberFilesArePrivate: whatever the umask and whoever made the data
// directory, a member's directories end up 0700 and its files 0600 (on
// 7d71c65 snapshots, which hold session passwords, were 0644 in an
// operator's 0755 directory).
func TestMemberFilesArePrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	n := openNode(t, dir, func(c *Config) { c.SnapshotThreshold = 10 })
	if _, err := n.ProposeWait(&znode.Txn{Type: jute.OpCreateSession, Session: 3, Time: 1, Timeout: 10000, Passwd: make([]byte, 16)}); err != nil {
		t.Fatal(err)
	}
	if err := n.Snapshot(); err != nil {
		t.Fatal(err)
	}
	n.Close()
	// Files a run left readable (an older build, an operator's copy) are
	// tightened at the next start.
	var loose []string
	check := func() {
		loose = loose[:0]
		_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				t.Fatal(err)
			}
			st, _ := os.Stat(path)
			if st.Mode().Perm()&0o077 != 0 {
				loose = append(loose, path+" "+st.Mode().Perm().String())
			}
			return nil
		})
	}
	check()
	if len(loose) > 0 {
		t.Errorf("readable by others after the first run: %v", loose)
	}
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		mode := fs.FileMode(0o644)
		if d.IsDir() {
			mode = 0o755
		}
		return os.Chmod(path, mode)
	})
	n = openNode(t, dir)
	n.Close()
	check()
	if len(loose) > 0 {
		t.Errorf("still readable by others after a restart: %v", loose)
	}
}
