package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// PidFile is the file in a data directory that a running zkraft holds
// locked and writes its pid to. ZooKeeper's zkServer.sh keeps
// zookeeper_server.pid there; the lock (flock, released by the kernel
// when the process dies, kill -9 included) is what keeps a second server
// off the directory, the pid what names the first.
const PidFile = "zkraft.pid"

// lockDataDir creates dir if need be, takes its lock and writes this
// process's pid. A directory another live process holds is an error
// naming that process. unlock releases the lock.
func lockDataDir(dir string) (unlock func(), err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	path := filepath.Join(dir, PidFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			b, _ := os.ReadFile(path)
			pid := strings.TrimSpace(string(b))
			if _, perr := strconv.Atoi(pid); perr != nil {
				pid = "unknown"
			}
			return nil, fmt.Errorf("data directory %s is in use by another zkraft, pid %s", dir, pid)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, fmt.Errorf("data directory: %w", err)
	}
	if _, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("data directory: %w", err)
	}
	// The file stays: removing it on exit would race a starting server
	// that has opened it but not locked it yet.
	return func() { f.Close() }, nil
}
