package main

import (
	"os"
	"syscall"
)

// datasync is fdatasync, as the members' journals use.
func datasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }
