package soak

import (
	"context"
	"fmt"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// faultMode says which operations a faultFS fails with EIO; zero fails none.
type faultMode uint32

const (
	faultRead  faultMode = 1 << iota // reads of file data
	faultWrite                       // writes, allocations, truncations, creations, renames and removals
	faultFsync                       // fsync and fdatasync
)

func (m faultMode) String() string {
	if m == 0 {
		return "none"
	}
	s := ""
	for _, f := range []struct {
		bit  faultMode
		name string
	}{{faultRead, "read"}, {faultWrite, "write"}, {faultFsync, "fsync"}} {
		if m&f.bit != 0 {
			if s != "" {
				s += "+"
			}
			s += f.name
		}
	}
	return s
}

// faultFS is a loopback FUSE file system: what is under its mount point is
// what is under its backing directory, except that the operations its mode
// names fail with EIO while the mode is set, as a failing disk's would. The
// kernel sees a real EIO, so the process on top gets it from the system
// call, not from a mock.
type faultFS struct {
	mountpoint string
	server     *fuse.Server
	mode       atomic.Uint32 // a faultMode
	failed     atomic.Int64  // operations failed with EIO so far
}

// mountFaultFS mounts a faultFS at mountpoint over backing. The caller must
// unmount it (unmount); a process that dies leaves a dead mount that
// umount -l removes.
func mountFaultFS(backing, mountpoint string) (*faultFS, error) {
	root, err := fs.NewLoopbackRoot(backing)
	if err != nil {
		return nil, fmt.Errorf("faultfs: %w", err)
	}
	f := &faultFS{mountpoint: mountpoint}
	lb := root.(*fs.LoopbackNode)
	node := &faultNode{LoopbackNode: lb, ffs: f}
	lb.RootData.RootNode = node
	second := time.Second
	server, err := fs.Mount(mountpoint, node, &fs.Options{
		EntryTimeout: &second,
		AttrTimeout:  &second,
		MountOptions: fuse.MountOptions{
			AllowOther:  true, // the container's process is root too, but docker's mount is made by the daemon
			DirectMount: true, // mount(2) ourselves as root; no fusermount needed
			FsName:      "zkraft-soak",
			Name:        "faultfs",
		},
	})
	if err != nil {
		return nil, fmt.Errorf("faultfs: mount %s: %w", mountpoint, err)
	}
	f.server = server
	return f, nil
}

// set makes the operations m names fail from now on (0: none).
func (f *faultFS) set(m faultMode) { f.mode.Store(uint32(m)) }

// unmount unmounts the file system; lazily if a process still holds it.
func (f *faultFS) unmount() error {
	f.set(0)
	if err := f.server.Unmount(); err != nil {
		if err2 := syscall.Unmount(f.mountpoint, syscall.MNT_DETACH); err2 != nil {
			return fmt.Errorf("faultfs: unmount %s: %w (lazy: %v)", f.mountpoint, err, err2)
		}
	}
	return nil
}

// fails reports whether an operation of kind m is to fail now, and counts it.
func (f *faultFS) fails(m faultMode) bool {
	if faultMode(f.mode.Load())&m == 0 {
		return false
	}
	f.failed.Add(1)
	return true
}

// faultNode is a loopback node whose mutations fail under faultWrite and
// whose files are faultFiles.
type faultNode struct {
	*fs.LoopbackNode
	ffs *faultFS
}

var (
	_ fs.NodeWrapChilder = (*faultNode)(nil)
	_ fs.NodeOpener      = (*faultNode)(nil)
	_ fs.NodeCreater     = (*faultNode)(nil)
	_ fs.NodeSetattrer   = (*faultNode)(nil)
)

// WrapChild makes every node below the root a faultNode too.
func (n *faultNode) WrapChild(_ context.Context, ops fs.InodeEmbedder) fs.InodeEmbedder {
	if lb, ok := ops.(*fs.LoopbackNode); ok {
		return &faultNode{LoopbackNode: lb, ffs: n.ffs}
	}
	return ops
}

func (n *faultNode) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	fh, fuseFlags, errno := n.LoopbackNode.Open(ctx, flags)
	if errno != 0 {
		return nil, 0, errno
	}
	return &faultFile{lf: fh.(*fs.LoopbackFile), ffs: n.ffs}, fuseFlags, 0
}

func (n *faultNode) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	if n.ffs.fails(faultWrite) {
		return nil, nil, 0, syscall.EIO
	}
	inode, fh, fuseFlags, errno := n.LoopbackNode.Create(ctx, name, flags, mode, out)
	if errno != 0 {
		return nil, nil, 0, errno
	}
	return inode, &faultFile{lf: fh.(*fs.LoopbackFile), ffs: n.ffs}, fuseFlags, 0
}

func (n *faultNode) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if n.ffs.fails(faultWrite) {
		return nil, syscall.EIO
	}
	return n.LoopbackNode.Mkdir(ctx, name, mode, out)
}

func (n *faultNode) Unlink(ctx context.Context, name string) syscall.Errno {
	if n.ffs.fails(faultWrite) {
		return syscall.EIO
	}
	return n.LoopbackNode.Unlink(ctx, name)
}

func (n *faultNode) Rmdir(ctx context.Context, name string) syscall.Errno {
	if n.ffs.fails(faultWrite) {
		return syscall.EIO
	}
	return n.LoopbackNode.Rmdir(ctx, name)
}

func (n *faultNode) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	if n.ffs.fails(faultWrite) {
		return syscall.EIO
	}
	if p, ok := newParent.(*faultNode); ok {
		newParent = p.LoopbackNode
	}
	return n.LoopbackNode.Rename(ctx, name, newParent, newName, flags)
}

func (n *faultNode) Setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if _, ok := in.GetSize(); ok && n.ffs.fails(faultWrite) {
		return syscall.EIO
	}
	if ff, ok := f.(*faultFile); ok {
		f = ff.lf
	}
	return n.LoopbackNode.Setattr(ctx, f, in, out)
}

func (n *faultNode) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if ff, ok := f.(*faultFile); ok {
		f = ff.lf
	}
	return n.LoopbackNode.Getattr(ctx, f, out)
}

// faultFile is an open loopback file whose reads, writes and syncs fail
// while the mode says so. It does not offer the kernel a passthrough file
// descriptor, so every read and write of data comes through here.
type faultFile struct {
	lf  *fs.LoopbackFile
	ffs *faultFS
}

var (
	_ fs.FileReader    = (*faultFile)(nil)
	_ fs.FileWriter    = (*faultFile)(nil)
	_ fs.FileFsyncer   = (*faultFile)(nil)
	_ fs.FileFlusher   = (*faultFile)(nil)
	_ fs.FileReleaser  = (*faultFile)(nil)
	_ fs.FileGetattrer = (*faultFile)(nil)
	_ fs.FileSetattrer = (*faultFile)(nil)
	_ fs.FileAllocater = (*faultFile)(nil)
	_ fs.FileLseeker   = (*faultFile)(nil)
	_ fs.FileGetlker   = (*faultFile)(nil)
	_ fs.FileSetlker   = (*faultFile)(nil)
	_ fs.FileSetlkwer  = (*faultFile)(nil)
)

func (f *faultFile) Read(ctx context.Context, buf []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if f.ffs.fails(faultRead) {
		return nil, syscall.EIO
	}
	return f.lf.Read(ctx, buf, off)
}

func (f *faultFile) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	if f.ffs.fails(faultWrite) {
		return 0, syscall.EIO
	}
	return f.lf.Write(ctx, data, off)
}

func (f *faultFile) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	if f.ffs.fails(faultFsync) {
		return syscall.EIO
	}
	return f.lf.Fsync(ctx, flags)
}

func (f *faultFile) Allocate(ctx context.Context, off, size uint64, mode uint32) syscall.Errno {
	if f.ffs.fails(faultWrite) {
		return syscall.EIO
	}
	return f.lf.Allocate(ctx, off, size, mode)
}

func (f *faultFile) Setattr(ctx context.Context, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if _, ok := in.GetSize(); ok && f.ffs.fails(faultWrite) {
		return syscall.EIO
	}
	return f.lf.Setattr(ctx, in, out)
}

func (f *faultFile) Flush(ctx context.Context) syscall.Errno   { return f.lf.Flush(ctx) }
func (f *faultFile) Release(ctx context.Context) syscall.Errno { return f.lf.Release(ctx) }
func (f *faultFile) Getattr(ctx context.Context, out *fuse.AttrOut) syscall.Errno {
	return f.lf.Getattr(ctx, out)
}
func (f *faultFile) Lseek(ctx context.Context, off uint64, whence uint32) (uint64, syscall.Errno) {
	return f.lf.Lseek(ctx, off, whence)
}
func (f *faultFile) Getlk(ctx context.Context, owner uint64, lk *fuse.FileLock, flags uint32, out *fuse.FileLock) syscall.Errno {
	return f.lf.Getlk(ctx, owner, lk, flags, out)
}
func (f *faultFile) Setlk(ctx context.Context, owner uint64, lk *fuse.FileLock, flags uint32) syscall.Errno {
	return f.lf.Setlk(ctx, owner, lk, flags)
}
func (f *faultFile) Setlkw(ctx context.Context, owner uint64, lk *fuse.FileLock, flags uint32) syscall.Errno {
	return f.lf.Setlkw(ctx, owner, lk, flags)
}
