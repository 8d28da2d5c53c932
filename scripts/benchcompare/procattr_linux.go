package main

import "syscall"

// memberProcAttr makes a member process get SIGKILL when benchcompare
// dies, even by kill -9, so no ensemble outlives its run.
func memberProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
