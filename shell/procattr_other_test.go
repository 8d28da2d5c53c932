//go:build !linux

package shell

import "os/exec"

// dieWithParent is a no-op where the kernel offers no parent-death signal.
func dieWithParent(*exec.Cmd) {}
