package lock

import (
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Hold returns when stdin reaches its end, when SIGINT, SIGTERM or SIGHUP
// arrives (nil either way), or with ErrLost when lost is closed first.
func Hold(stdin io.Reader, lost <-chan struct{}) error {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
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
