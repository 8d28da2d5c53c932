package session

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/rawclient"
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
			a, b := rawclient.Dial(t, ts.addr), rawclient.Dial(t, ts.addr)
			a.Connect(false)
			b.Connect(false)
			third := rawclient.Dial(t, ts.addr)
			third.ExpectClosed()

			a.Conn.Close()
			deadline := time.Now().Add(5 * time.Second)
			for {
				nc, err := net.DialTimeout("tcp", ts.addr, time.Second)
				if err != nil {
					t.Fatal(err)
				}
				c := rawclient.New(t, nc)
				_ = nc.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
				one := make([]byte, 1)
				var ne net.Error
				if _, err := nc.Read(one); errors.As(err, &ne) && ne.Timeout() {
					c.Connect(false) // still open: admitted
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
