package session

import (
	"testing"
)

// TestConnectionListsDuringHandshakes lists the connections (cons, dump)
// while sessions are being opened. The words read each connection's
// session on their own goroutine, from the identity bind publishes; under
// the race detector (make test's race pass) reading the fields the
// handshake sets was reported (found through the quorum watcher, which
// reads them the same way).
func TestConnectionListsDuringHandshakes(t *testing.T) {
	ts := startServer(t)
	stop, listed := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(listed)
		for {
			for _, w := range []string{"cons", "dump"} {
				c := dialRaw(t, ts.addr)
				c.sendRaw([]byte(w))
				readAll(t, c)
			}
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	for range 40 {
		c := dialRaw(t, ts.addr)
		if resp := c.connect(false); resp.SessionID == 0 {
			t.Fatal("no session")
		}
	}
	close(stop)
	<-listed
}
