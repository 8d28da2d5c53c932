//go:build !linux

package bench

import "syscall"

// workerProcAttr has nothing to add off Linux (no parent-death signal):
// a worker still exits when its input closes.
func workerProcAttr() *syscall.SysProcAttr { return nil }
