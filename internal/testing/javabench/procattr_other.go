//go:build !linux

package javabench

import "syscall"

// procAttr puts the JVM in a process group of its own; elsewhere than
// Linux its closed standard input alone stops it when this process dies.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
