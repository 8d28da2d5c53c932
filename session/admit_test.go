package session

import (
	"bufio"
	"errors"
	"net"
	"testing"
	"time"
)

// TestConnectionLimits: maxCnxns bounds the connections in all and
// maxClientCnxns those of one address; a connection past either is closed
// at once, and a freed place is taken again.
func TestConnectionLimits(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*Config)
	}{
		{"maxCnxns", func(c *Config) { c.MaxCnxns = 2 }},
		{"maxClientCnxns", func(c *Config) { c.MaxClientCnxns = 2 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := startServer(t, tc.mutate)
			a, b := dialRaw(t, ts.addr), dialRaw(t, ts.addr)
			a.connect(false)
			b.connect(false)
			third := dialRaw(t, ts.addr)
			third.expectClosed()

			a.nc.Close()
			deadline := time.Now().Add(5 * time.Second)
			for {
				nc, err := net.DialTimeout("tcp", ts.addr, time.Second)
				if err != nil {
					t.Fatal(err)
				}
				c := &rawClient{t: t, nc: nc, br: bufio.NewReader(nc)}
				_ = nc.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
				one := make([]byte, 1)
				var ne net.Error
				if _, err := nc.Read(one); errors.As(err, &ne) && ne.Timeout() {
					c.connect(false) // still open: admitted
					nc.Close()
					return
				}
				nc.Close()
				if time.Now().After(deadline) {
					t.Fatal("no place freed after a connection closed")
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}
