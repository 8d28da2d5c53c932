package session

import (
	"net"
	"syscall"
	"testing"
)

// TestListenLeavesKeepaliveOff: like ZooKeeper's, accepted client
// connections have no TCP keepalive (Go's default listener turns it on).
func TestListenLeavesKeepaliveOff(t *testing.T) {
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	raw, err := sc.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var on int
	var serr error
	if err := raw.Control(func(fd uintptr) {
		on, serr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_KEEPALIVE)
	}); err != nil || serr != nil {
		t.Fatal(err, serr)
	}
	if on != 0 {
		t.Fatal("TCP keepalive is on for an accepted client connection")
	}
	nodelay := -1
	_ = raw.Control(func(fd uintptr) {
		nodelay, serr = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_NODELAY)
	})
	if serr != nil || nodelay == 0 {
		t.Fatalf("TCP_NODELAY %d (%v): small replies would wait for Nagle", nodelay, serr)
	}
}
