package main

import (
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// Cleanups stop the ensembles' member processes and remove their
// directories however the run ends: when main returns, when fail exits,
// and on SIGINT or SIGTERM. (A failed run used to exit with its six
// members still running and their data left behind; the JVMs alone hold
// gigabytes once populated.) Members also get SIGKILL if benchcompare
// itself is killed (memberProcAttr).
var (
	cleanupMu sync.Mutex
	cleanups  []func()
	// runningMu is held while cleanups run: a second way out (a signal
	// while main fails because the members are going) waits for them
	// instead of exiting halfway through.
	runningMu sync.Mutex
)

// atExit registers f to run at the end of the run, before those
// registered earlier.
func atExit(f func()) {
	cleanupMu.Lock()
	defer cleanupMu.Unlock()
	cleanups = append(cleanups, f)
}

// runCleanups runs the registered cleanups, newest first, once.
func runCleanups() {
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

// exit runs the cleanups and exits with code.
func exit(code int) {
	runCleanups()
	os.Exit(code)
}

// fail reports err and ends the run with its cleanups.
func fail(err error) {
	fmt.Fprintln(os.Stderr, "benchcompare:", err)
	exit(1)
}

// cleanupOnSignal ends the run with its cleanups on SIGINT or SIGTERM.
func cleanupOnSignal() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-ch
		fmt.Fprintln(os.Stderr, "benchcompare:", sig, "- stopping the ensembles")
		exit(1)
	}()
}
