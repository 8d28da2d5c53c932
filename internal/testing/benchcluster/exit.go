package benchcluster

import (
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// A command's cleanups stop its ensembles' member processes and remove
// their directories however the run ends: when main returns, when Fail
// exits, and on SIGINT or SIGTERM. (A failed run used to exit with its
// members still running and their data left behind; the JVMs alone hold
// gigabytes once populated.) Members also get SIGKILL if the command
// itself is killed (memberProcAttr).
var (
	cleanupMu sync.Mutex
	cleanups  []func()
	// runningMu is held while cleanups run: a second way out (a signal
	// while main fails because the members are going) waits for them
	// instead of exiting halfway through.
	runningMu sync.Mutex
)

// AtExit registers f to run at the end of the run, before those
// registered earlier.
func AtExit(f func()) {
	cleanupMu.Lock()
	defer cleanupMu.Unlock()
	cleanups = append(cleanups, f)
}

// RunCleanups runs the registered cleanups, newest first, once.
func RunCleanups() {
	runningMu.Lock()
	defer runningMu.Unlock()
	cleanupMu.Lock()
	fs := cleanups
	cleanups = nil
	cleanupMu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}

// Exit runs the cleanups and exits with code.
func Exit(code int) {
	RunCleanups()
	os.Exit(code)
}

// Fail reports err as command's and ends the run with its cleanups.
func Fail(command string, err error) {
	fmt.Fprintln(os.Stderr, command+":", err)
	Exit(1)
}

// CleanupOnSignal ends the run of command with its cleanups on SIGINT or
// SIGTERM.
func CleanupOnSignal(command string) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-ch
		fmt.Fprintln(os.Stderr, command+":", sig, "- stopping the ensembles")
		Exit(1)
	}()
}
