package lock

import (
	"io"
	"os"
	"os/signal"
	"syscall"
)

// stopSignals are the signals that end a hold (and that Child.Run passes
// on to CMD's process group).
var stopSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

// notifyStop starts catching the stop signals; stop ends it. Run calls it
// before it announces the lock: a script that reads the token and at once
// sends SIGTERM must find the signal caught (the lock released, exit 0),
// not this process killed with its node left for the session's expiry.
func notifyStop() (sigs chan os.Signal, stop func()) {
	sigs = make(chan os.Signal, 4)
	signal.Notify(sigs, stopSignals...)
	return sigs, func() { signal.Stop(sigs) }
}

// Hold returns when stdin reaches its end, when a signal arrives on sigs
// (nil either way), or with ErrLost when lost is closed first.
func Hold(stdin io.Reader, sigs <-chan os.Signal, lost <-chan struct{}) error {
	eof := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, stdin)
		close(eof)
	}()
	select {
	case <-eof:
		return nil
	case <-sigs:
		return nil
	case <-lost:
		return ErrLost
	}
}
