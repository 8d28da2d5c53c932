package ensemble

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/zkraft/zkraft/ensemble/storage"

	"go.uber.org/zap"
)

// logFiles are the files that make up the replicated log.
var logFiles = []string{storage.LogStoreFile, storage.JournalFile}

// ErrLogDirConflict is returned when both the data directory and a separate
// log directory hold a replicated log: which one is current is unknown.
var ErrLogDirConflict = errors.New("ensemble: both dataDir and dataLogDir hold a raft log")

// resolveLogDir returns the directory the replicated log is kept in:
// cfg.LogDir when set (zoo.cfg dataLogDir), else cfg.DataDir. A member
// whose log is still in its data directory from before a log directory
// was configured keeps using it (and says so) rather than starting empty
// beside it; if both directories hold a log, it refuses to choose.
func resolveLogDir(cfg *Config) (string, error) {
	if cfg.LogDir == "" || sameDir(cfg.LogDir, cfg.DataDir) {
		return cfg.DataDir, nil
	}
	inData, inLog := hasLog(cfg.DataDir), hasLog(cfg.LogDir)
	switch {
	case inData && inLog:
		return "", fmt.Errorf("%w: %s and %s; keep one", ErrLogDirConflict, cfg.DataDir, cfg.LogDir)
	case inData:
		cfg.Logger.Warn("the raft log is still in dataDir, not in dataLogDir: using it there; "+
			"to move it, stop this member and move "+storage.LogStoreFile+" and "+storage.JournalFile,
			zap.String("dataDir", cfg.DataDir), zap.String("dataLogDir", cfg.LogDir))
		return cfg.DataDir, nil
	}
	return cfg.LogDir, nil
}

// hasLog reports whether dir holds a replicated log.
func hasLog(dir string) bool {
	for _, name := range logFiles {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
}

// sameDir reports whether a and b name one directory.
func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// LogDir is the directory the replicated log is kept in (Config.LogDir,
// or DataDir).
func (n *Node) LogDir() string { return n.logDir }
