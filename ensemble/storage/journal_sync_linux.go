package storage

import (
	"errors"
	"syscall"
)

// Datasync is fdatasync, which skips the inode's timestamps (the
// journal's size and blocks never change once it is written out).
func (f osFile) Datasync() error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
