package storage

import (
	"errors"
	"fmt"
	"syscall"
)

// sync makes the journal's data durable: fdatasync, which skips the
// inode's timestamps (the file's size and blocks never change once it is
// written out).
func (j *Journal) sync() error {
	j.Syncs.Add(1)
	for {
		err := syscall.Fdatasync(int(j.f.Fd()))
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("storage: journal sync: %w", err)
		}
		return nil
	}
}
