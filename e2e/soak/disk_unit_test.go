package soak

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestFaultyDisk checks the disk faults themselves: a write through the
// faultFS lands on the ext4 image; a full disk fails a write with ENOSPC
// until the filler goes; each EIO mode fails its operations and only those.
func TestFaultyDisk(t *testing.T) {
	requireHostTools(t)
	d, err := newFaultyDisk(t.TempDir(), 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := d.close(); err != nil {
			t.Error(err)
		}
	}()
	p := filepath.Join(d.mountpoint, "f")
	if err := os.WriteFile(p, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(d.dataDir(), "f")); err != nil || string(b) != "hello" {
		t.Fatalf("backing file: %q, %v", b, err)
	}

	n, err := d.fill()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("filler took %d bytes; %d left", n, d.free())
	big := make([]byte, 1<<20)
	if err := os.WriteFile(filepath.Join(d.mountpoint, "g"), big, 0o644); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write on a full disk: %v, want ENOSPC", err)
	}
	if err := d.unfill(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d.mountpoint, "g"), big, 0o644); err != nil {
		t.Fatalf("write once the filler is gone: %v", err)
	}

	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d.fs.set(faultFsync)
	if _, err := f.WriteAt([]byte("x"), 0); err != nil {
		t.Fatalf("write under fsync faults: %v", err)
	}
	if err := syscall.Fdatasync(int(f.Fd())); !errors.Is(err, syscall.EIO) {
		t.Fatalf("fdatasync: %v, want EIO", err)
	}
	d.fs.set(faultWrite)
	if _, err := f.WriteAt([]byte("y"), 0); !errors.Is(err, syscall.EIO) {
		t.Fatalf("write: %v, want EIO", err)
	}
	if _, err := os.Create(filepath.Join(d.mountpoint, "h")); !errors.Is(err, syscall.EIO) {
		t.Fatalf("create: %v, want EIO", err)
	}
	// A file written behind the kernel's back is not in its page cache:
	// reading it through the mount asks the faultFS.
	if err := os.WriteFile(filepath.Join(d.dataDir(), "r"), []byte("uncached"), 0o644); err != nil {
		t.Fatal(err)
	}
	d.fs.set(faultRead)
	if _, err := os.ReadFile(filepath.Join(d.mountpoint, "r")); !errors.Is(err, syscall.EIO) {
		t.Fatalf("read: %v, want EIO", err)
	}
	d.fs.set(0)
	if b, err := os.ReadFile(filepath.Join(d.mountpoint, "r")); err != nil || string(b) != "uncached" {
		t.Fatalf("read once healed: %q, %v", b, err)
	}
	if d.fs.failed.Load() < 4 {
		t.Fatalf("%d operations failed, want at least 4", d.fs.failed.Load())
	}
}
