package soak

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// faultyDisk is the data directory of the member that takes disk faults: a
// small ext4 file system on a loop device (so it can be filled up for real)
// seen through a faultFS (so its operations can fail with EIO). The member's
// container bind-mounts mountpoint as its data directory.
//
//	image       sparse file holding the ext4 file system
//	backing/    the ext4 file system, mounted over a loop device
//	backing/data  what the member sees (faultFS's backing directory)
//	backing/filler  the file that fills the disk up
//	mountpoint/ the faultFS mount over backing/data
type faultyDisk struct {
	image      string
	backing    string
	mountpoint string
	fs         *faultFS
}

// newFaultyDisk makes a size-byte ext4 image in dir and mounts it and the
// faultFS over it. On error, whatever it mounted is unmounted again.
func newFaultyDisk(dir string, size int64) (d *faultyDisk, err error) {
	d = &faultyDisk{
		image:      filepath.Join(dir, "disk.img"),
		backing:    filepath.Join(dir, "ext4"),
		mountpoint: filepath.Join(dir, "data"),
	}
	for _, p := range []string{d.backing, d.mountpoint} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			return nil, err
		}
	}
	f, err := os.Create(d.image)
	if err != nil {
		return nil, err
	}
	err = f.Truncate(size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	// -m 0: no blocks reserved for root (the member runs as root and would
	// write into them); lazy init keeps mkfs quick.
	if err := run("mkfs.ext4", "-q", "-F", "-m", "0", "-E", "lazy_itable_init=1,lazy_journal_init=1", d.image); err != nil {
		return nil, err
	}
	if err := run("mount", "-o", "loop", d.image, d.backing); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = syscall.Unmount(d.backing, syscall.MNT_DETACH)
		}
	}()
	if err := os.MkdirAll(d.dataDir(), 0o755); err != nil {
		return nil, err
	}
	if d.fs, err = mountFaultFS(d.dataDir(), d.mountpoint); err != nil {
		return nil, err
	}
	return d, nil
}

// dataDir is the member's data directory on the ext4 file system itself,
// for writing its myid before it starts.
func (d *faultyDisk) dataDir() string { return filepath.Join(d.backing, "data") }

// fill takes every free block of the file system with a filler file (its
// blocks are allocated, not written) and returns how many bytes it took.
func (d *faultyDisk) fill() (int64, error) {
	f, err := os.OpenFile(filepath.Join(d.backing, "filler"), os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	off := st.Size()
	start := off
	var sfs syscall.Statfs_t
	if err := syscall.Statfs(d.backing, &sfs); err != nil {
		return 0, err
	}
	chunk := int64(sfs.Bavail) * sfs.Bsize
	for chunk >= 4096 {
		err := syscall.Fallocate(int(f.Fd()), 0, off, chunk)
		switch {
		case err == nil:
			off += chunk
		case errors.Is(err, syscall.ENOSPC):
			chunk /= 2
		default:
			return off - start, fmt.Errorf("fill %s: %w", d.backing, err)
		}
	}
	return off - start, nil
}

// free returns the bytes still free on the file system.
func (d *faultyDisk) free() int64 {
	var sfs syscall.Statfs_t
	if err := syscall.Statfs(d.backing, &sfs); err != nil {
		return -1
	}
	return int64(sfs.Bavail) * sfs.Bsize
}

// unfill removes the filler file.
func (d *faultyDisk) unfill() error {
	err := os.Remove(filepath.Join(d.backing, "filler"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// close unmounts the faultFS and the ext4 file system (the loop device goes
// with it) and removes the image.
func (d *faultyDisk) close() error {
	var errs []error
	if d.fs != nil {
		errs = append(errs, d.fs.unmount())
	}
	if err := syscall.Unmount(d.backing, 0); err != nil {
		errs = append(errs, syscall.Unmount(d.backing, syscall.MNT_DETACH))
	}
	errs = append(errs, os.Remove(d.image))
	return errors.Join(errs...)
}

// run runs a command and returns its error with its output.
func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
