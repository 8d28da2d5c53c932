package bench

import "syscall"

// ipBindAddressNoPort is Linux's IP_BIND_ADDRESS_NO_PORT (linux/in.h).
const ipBindAddressNoPort = 0x18

// bindAddressNoPort is a net.Dialer Control that defers the choice of the
// source port from bind to connect, where the kernel can reuse a port
// for another destination.
func bindAddressNoPort(_, _ string, c syscall.RawConn) error {
	var serr error
	if err := c.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, ipBindAddressNoPort, 1)
	}); err != nil {
		return err
	}
	return serr
}
