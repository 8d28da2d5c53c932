package lock

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Child is a command run while the lock is held.
type Child struct {
	Args   []string
	Env    []string // added to this process's environment
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Grace is how long the command has between SIGTERM and SIGKILL
	// once the session is lost.
	Grace time.Duration
	// Signals are this process's stop signals, caught since before the
	// lock was announced (nil: Run catches them itself).
	Signals <-chan os.Signal
}

// Run runs the command in a process group of its own until it exits or
// lost is closed; SIGINT, SIGTERM and SIGHUP this process receives are
// passed on to the group. It returns the command's exit status (128+N
// when signal N ended it). When lost is closed first the group gets
// SIGTERM, then SIGKILL after Grace, and Run returns ErrLost.
func (c Child) Run(lost <-chan struct{}) (int, error) {
	if len(c.Args) == 0 {
		return 0, errors.New("no command")
	}
	cmd := exec.Command(c.Args[0], c.Args[1:]...)
	cmd.Env = append(os.Environ(), c.Env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = c.Stdin, c.Stdout, c.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	sigs := c.Signals
	if sigs == nil {
		caught, stop := notifyStop()
		defer stop()
		sigs = caught
	}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("start %s: %w", c.Args[0], err)
	}
	pgid := cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var kill <-chan time.Time
	wasLost := false
	for {
		select {
		case err := <-exited:
			// The group may outlive its leader: end what is left.
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			if wasLost {
				return statusOf(cmd, err), ErrLost
			}
			return statusOf(cmd, err), nil
		case s := <-sigs:
			_ = syscall.Kill(-pgid, s.(syscall.Signal))
		case <-lost:
			lost, wasLost = nil, true
			_ = syscall.Kill(-pgid, syscall.SIGTERM)
			kill = time.After(c.Grace)
		case <-kill:
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
	}
}

// statusOf is the command's exit status, 128+N for a signal N.
func statusOf(cmd *exec.Cmd, err error) int {
	ps := cmd.ProcessState
	if ps == nil {
		return 1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	if err != nil && ps.ExitCode() == 0 {
		return 1
	}
	return ps.ExitCode()
}
