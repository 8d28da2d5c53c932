//go:build unix

package session

import "syscall"

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
