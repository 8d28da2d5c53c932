//go:build !linux

package benchcluster

import "syscall"

// memberProcAttr puts a member in a process group of its own (Kill ends
// the group); there is no parent-death signal off Linux.
func memberProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
