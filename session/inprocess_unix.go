//go:build unix

package session

import (
	"fmt"
	"net"
	"os"
	"syscall"
)

// connPair returns the two ends of a Unix stream socket pair: real sockets,
// so the server end is read, parked and peeked like a TCP connection.
func connPair() (server, client net.Conn, err error) {
	syscall.ForkLock.RLock() // no child may inherit the fds before CloseOnExec
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fds[0])
		syscall.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, nil, fmt.Errorf("socketpair: %w", err)
	}
	server, err = fileConn(fds[0], "zkraft-inprocess-server")
	if err != nil {
		syscall.Close(fds[1])
		return nil, nil, err
	}
	client, err = fileConn(fds[1], "zkraft-inprocess-client")
	if err != nil {
		server.Close()
		return nil, nil, err
	}
	return server, client, nil
}

// fileConn makes fd a net.Conn (net.FileConn takes a duplicate, so fd is
// closed here).
func fileConn(fd int, name string) (net.Conn, error) {
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	nc, err := net.FileConn(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return nc, nil
}
