package storage

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"go.uber.org/zap"
)

// A member's files hold everything its clients stored, ACL digests and
// session passwords (one lets a session be resumed from another
// connection), so its directories are 0700 and its files 0600 whatever
// the umask, and whoever created the directories (an operator's
// /var/lib/zookeeper is often 0755).

// PrivateDir creates dir (and its parents) as 0700, or takes group and
// other permissions away from an existing one.
func PrivateDir(dir string, log *zap.Logger) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("storage: create %s: %w", dir, err)
	}
	return tighten(dir, 0o700, log)
}

// PrivateTree takes group and other permissions away from every directory
// (0700) and file (0600) under root, if it exists; log (nil: quietly) is
// told of each change.
func PrivateTree(root string, log *zap.Logger) error {
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		mode := fs.FileMode(0o600)
		if d.IsDir() {
			mode = 0o700
		}
		return tighten(path, mode, log)
	})
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("storage: permissions under %s: %w", root, err)
	}
	return nil
}

// tighten sets path's permissions to want when it grants anything to
// group or others, and tells log (if not nil).
func tighten(path string, want fs.FileMode, log *zap.Logger) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	if st.Mode().Perm()&0o077 == 0 {
		return nil
	}
	if err := os.Chmod(path, want|st.Mode().Perm()&0o700); err != nil {
		return fmt.Errorf("storage: make %s private: %w", path, err)
	}
	if log == nil {
		return nil
	}
	log.Info("took group and other permissions away from a member file",
		zap.String("path", path), zap.String("was", st.Mode().Perm().String()))
	return nil
}
