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

// A connection accepted while the server closes is refused, not served:
// Close has killed every registered connection by then and waits for
// their readers, and one admitted after would hold its reader (a silent
// client for the first-frame timeout) with nobody to kill it, its count
// in the WaitGroup rising while Close waits.
func TestAdmitRefusedOnceClosing(t *testing.T) {
	ts := startServer(t)
	c := pipeConn(t, ts)
	ts.srv.Close()
	why, rl := ts.srv.admit(c)
	if why == "" {
		ts.srv.forget(c) // undo, for the test's own Close: c has no reader
		ts.srv.wg.Done()
		t.Fatal("admitted after Close")
	}
	if rl != nil {
		t.Fatalf("refused after Close as %q, counted as a refusal; want refused as closing", why)
	}
}
