package bench

import "syscall"

// workerProcAttr makes a fleet worker get SIGKILL when the process that
// started it dies, so its sessions do not outlive the run.
func workerProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
