//go:build unix

package session

import (
	"io"
	"os"
	"syscall"
)

// canPeek reports whether peekReady works here.
const canPeek = true

// peekReady reports whether a read of fd would not block: it peeks at one
// byte without waiting and without consuming it.
func peekReady(fd uintptr, b []byte) bool {
	_, _, err := syscall.Recvfrom(int(fd), b, syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	// Anything but "would block" (bytes, EOF, an error) is for the read
	// that follows to see.
	return err != syscall.EAGAIN && err != syscall.EWOULDBLOCK
}

// readNow reads what fd holds into p without waiting: errWouldBlock if
// nothing, io.EOF at the end.
func readNow(fd uintptr, p []byte) (int, error) {
	for {
		n, err := syscall.Read(int(fd), p)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN || err == syscall.EWOULDBLOCK:
			return 0, errWouldBlock
		case err != nil:
			return 0, os.NewSyscallError("read", err)
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}
