package operator

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/rawclient"
	"github.com/zkraft/zkraft/session"
)

// TestMntrConnectionRejected: mntr reports zk_connection_rejected as
// ZooKeeper 3.8's does (a ServerMetrics counter, after the server's own
// figures): the connections refused over maxClientCnxns count there, and
// the AdminServer's monitor command has it too.
func TestMntrConnectionRejected(t *testing.T) {
	ts := startServer(t, func(c *session.Config) { c.MaxClientCnxns = 2 })
	kept := rawclient.Dial(t, ts.addr)
	kept.Connect(false)
	over := make([]net.Conn, 0, 2)
	for range 3 {
		c, err := net.Dial("tcp", ts.addr)
		if err != nil {
			t.Fatal(err)
		}
		over = append(over, c)
	}
	// The first of the three takes the second place; the others are
	// refused at once.
	for _, c := range over[1:] {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, _ = io.Copy(io.Discard, c)
		c.Close()
	}
	over[0].Close()
	var mntr strings.Builder
	newView(ts.srv).writeMntr(&mntr)
	if !strings.Contains(mntr.String(), "zk_uptime\t") || !strings.Contains(mntr.String(), "\nzk_connection_rejected\t2\n") {
		t.Fatalf("mntr lacks zk_connection_rejected 2:\n%s", mntr.String())
	}
	if got := NewAdmin(ts.srv).Response("monitor"); !strings.Contains(got, `"connection_rejected" : 2`) {
		t.Errorf("the monitor command lacks connection_rejected 2:\n%s", got)
	}
}
