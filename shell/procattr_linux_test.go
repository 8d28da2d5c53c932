package shell

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel kill cmd if the test binary dies first, so
// a crashed or killed test run leaves no ZooKeeper behind.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
