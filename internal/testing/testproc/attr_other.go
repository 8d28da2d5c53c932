//go:build !linux

package testproc

import "syscall"

// setAttr puts the process in a group of its own; only Linux has a
// parent-death signal, so elsewhere the cleanups and the reaper alone
// stop what a dying test binary left.
func setAttr(a *syscall.SysProcAttr) {
	a.Setpgid = true
	a.Pgid = 0
}
