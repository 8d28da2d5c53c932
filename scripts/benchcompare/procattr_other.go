//go:build !linux

package main

import "syscall"

// memberProcAttr has nothing to add off Linux (no parent-death signal).
func memberProcAttr() *syscall.SysProcAttr { return nil }
