//go:build !linux

package bench

import "syscall"

// bindAddressNoPort does nothing off Linux: the port is chosen at bind.
func bindAddressNoPort(_, _ string, _ syscall.RawConn) error { return nil }
