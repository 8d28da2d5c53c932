package testproc

import "syscall"

// setAttr puts the process in a group of its own and has the kernel kill
// it when the thread that started it dies, which for a test binary is
// when the binary dies: Go ends a thread only when a goroutine that
// locked it (runtime.LockOSThread) returns without unlocking, which
// nothing that starts a process here does.
func setAttr(a *syscall.SysProcAttr) {
	a.Setpgid = true
	a.Pgid = 0
	a.Pdeathsig = syscall.SIGKILL
}
