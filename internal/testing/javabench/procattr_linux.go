package javabench

import "syscall"

// procAttr puts the JVM in a process group of its own and has the kernel
// kill it when this process dies, even by kill -9.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
