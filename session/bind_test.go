package session

import (
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/rawclient"
)

// TestConnectionListsDuringHandshakes lists the connections (Connections,
// which cons and dump print) while sessions are being opened. The list
// reads each connection's session on its own goroutine, from the identity
// bind publishes; under
// the race detector (make test's race pass) reading the fields the
// handshake sets was reported (found through the quorum watcher, which
// reads them the same way).
func TestConnectionListsDuringHandshakes(t *testing.T) {
	ts := startServer(t)
	stop, listed := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(listed)
		for {
			for _, c := range ts.srv.Connections() {
				_ = c.SessionID
			}
			time.Sleep(time.Millisecond)
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	for range 40 {
		c := rawclient.Dial(t, ts.addr)
		if resp := c.Connect(false); resp.SessionID == 0 {
			t.Fatal("no session")
		}
	}
	close(stop)
	<-listed
}
