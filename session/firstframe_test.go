package session

import (
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/rawclient"
	"github.com/zkraft/zkraft/jute"
)

// TestFirstFrameTimeout: a connection that sends nothing is closed once
// FirstFrameTimeout passes (ZooKeeper's sessionlessCnxnTimeout), while a
// session, once connected, may stay quiet longer than that.
func TestFirstFrameTimeout(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.FirstFrameTimeout = 200 * time.Millisecond })

	silent := rawclient.Dial(t, ts.addr)
	start := time.Now()
	silent.ExpectClosed()
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("silent connection closed after %v", d)
	}

	// Half a ConnectRequest is not enough either.
	partial := rawclient.Dial(t, ts.addr)
	partial.SendRaw([]byte{0, 0, 0, 44, 0, 0})
	partial.ExpectClosed()

	c := rawclient.Dial(t, ts.addr)
	time.Sleep(100 * time.Millisecond) // within the timeout
	if resp := c.Connect(false); resp.SessionID == 0 {
		t.Fatal("no session")
	}
	time.Sleep(500 * time.Millisecond) // past it: the session is not bound by it
	c.Request(1, jute.OpExists, &jute.PathWatchRequest{Path: "/"})
	if h := c.Reply(&jute.StatResponse{}); h.Err != jute.OK || h.Xid != 1 {
		t.Fatalf("exists after a quiet spell: %+v", h)
	}
}

// TestFirstFrameTimeoutDefault: ZooKeeper's 10 s.
func TestFirstFrameTimeoutDefault(t *testing.T) {
	var c Config
	c.setDefaults()
	if c.FirstFrameTimeout != 10*time.Second {
		t.Fatalf("default %v", c.FirstFrameTimeout)
	}
}
