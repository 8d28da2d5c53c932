package testproc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Stop sends SIGSTOP to pid and returns once every one of its threads is
// stopped. kill(2) returns before that: the group stop begins only when the
// thread chosen for the signal next runs, and until then the process's
// other threads go on (on a loaded machine, for milliseconds and more), so
// a test that stops a server and then acts on another may still see the
// stopped one answer.
func Stop(pid int, within time.Duration) error {
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return fmt.Errorf("SIGSTOP %d: %w", pid, err)
	}
	deadline := time.Now().Add(within)
	for {
		running, err := runningThreads(pid)
		if err != nil {
			return err
		}
		if running == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("process %d: %d threads not stopped %v after SIGSTOP", pid, running, within)
		}
		time.Sleep(time.Millisecond)
	}
}

// runningThreads counts pid's threads that are not stopped (state T or t
// in /proc/PID/task/TID/stat).
func runningThreads(pid int) (int, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	if err != nil || len(tasks) == 0 {
		return 0, fmt.Errorf("process %d: no threads listed: %v", pid, err)
	}
	running := 0
	for _, f := range tasks {
		st, err := procState(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue // the thread exited
		}
		if err != nil {
			return 0, err
		}
		if st != 'T' && st != 't' {
			running++
		}
	}
	return running, nil
}

// procState reads the state letter of a /proc stat file (a process's or a
// thread's): R, S, T, Z...
func procState(path string) (byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 || i+2 >= len(b) {
		return 0, fmt.Errorf("%s: %q", path, b)
	}
	return b[i+2], nil
}
