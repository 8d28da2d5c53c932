package benchcluster

import "syscall"

// memberProcAttr puts a member in a process group of its own (Kill ends
// the group) and makes it get SIGKILL when the process that started it
// dies, even by kill -9, so no ensemble outlives its run.
func memberProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
