package session

import (
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/rawclient"
	"github.com/zkraft/zkraft/jute"
)

// TestHandshakeWaitsForCatchUp: a client that has seen a zxid this member
// applies a moment later (a reconnect right after a leader change) gets its
// session once the member catches up, instead of being turned away; one
// still ahead after handshakeSettle is turned away as by ZooKeeper.
func TestHandshakeWaitsForCatchUp(t *testing.T) {
	ts := startServer(t)
	writer := rawclient.Dial(t, ts.addr)
	writer.Connect(false)

	c := rawclient.Dial(t, ts.addr)
	c.Send(&jute.ConnectRequest{LastZxidSeen: ts.node.LastZxid() + 1, TimeOut: 3000, Passwd: make([]byte, 16)})
	time.Sleep(200 * time.Millisecond) // the handshake waits meanwhile
	writer.Request(1, jute.OpCreate, &jute.CreateRequest{Path: "/next", ACL: openACL})
	if h := writer.Reply(nil); h.Err != jute.OK {
		t.Fatalf("create: %v", h.Err)
	}
	var resp jute.ConnectResponse
	if err := jute.Unmarshal(c.Frame(), &resp); err != nil {
		t.Fatal(err)
	}
	if resp.SessionID == 0 {
		t.Fatalf("client a zxid ahead was turned away though the member caught up: %+v", resp)
	}

	far := rawclient.Dial(t, ts.addr)
	start := time.Now()
	far.Send(&jute.ConnectRequest{LastZxidSeen: ts.node.LastZxid() + 1000, TimeOut: 3000, Passwd: make([]byte, 16)})
	far.ExpectClosed()
	if d := time.Since(start); d < handshakeSettle || d > handshakeSettle+3*time.Second {
		t.Errorf("a client still ahead was turned away after %v, want about %v", d, handshakeSettle)
	}
}
