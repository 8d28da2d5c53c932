package session

import (
	"strings"
	"testing"

	"github.com/zkraft/zkraft/internal/testing/rawclient"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// TestWritesDoNotCarryIdentities: a connection's identities reach the log
// once, not with every write. On 7d71c65 each write's entry carried all of
// them, failed writes included: 10 addauths of 1 MB, then 40 failing
// setData, grew the data directory by ~440 MB.
func TestWritesDoNotCarryIdentities(t *testing.T) {
	ts := startServer(t)
	c := rawclient.Dial(t, ts.addr)
	c.Connect(false)
	user := strings.Repeat("u", 4000)
	c.Request(jute.XidAuth, jute.OpAuth, &jute.AuthPacket{Scheme: "digest", Auth: []byte(user + ":pw")})
	if h := c.Reply(nil); h.Err != jute.OK {
		t.Fatalf("addauth: %v", h.Err)
	}
	for i := int32(1); i <= 40; i++ {
		c.Request(i, jute.OpSetData, &jute.SetDataRequest{Path: "/missing", Data: []byte("x"), Version: -1})
		if h := c.Reply(nil); h.Err != jute.ErrNoNode {
			t.Fatalf("setData %d: %v", i, h.Err)
		}
		if last, _, _ := ts.node.ProposalSizes(); last > 200 {
			t.Fatalf("setData %d logged %d bytes: its identities came with it", i, last)
		}
	}
	// The set was recorded once, under the session.
	tr := ts.node.RLockTree()
	si := tr.Sessions()[0]
	ts.node.RUnlockTree()
	if len(si.Identities) != 1 || len(si.Identities[0]) != 2 || !strings.HasPrefix(si.Identities[0][1].ID, user) {
		t.Fatalf("recorded identities: %d sets", len(si.Identities))
	}
}

// TestIdentityBounds: an addauth that would take a connection over its
// identity bounds fails as a failed auth does (AuthFailed, closed).
func TestIdentityBounds(t *testing.T) {
	ts := startServer(t)
	c := rawclient.Dial(t, ts.addr)
	c.Connect(false)
	huge := strings.Repeat("u", znode.MaxIdentityBytes) + ":pw"
	c.Request(jute.XidAuth, jute.OpAuth, &jute.AuthPacket{Scheme: "digest", Auth: []byte(huge)})
	if h := c.Reply(nil); h.Err != jute.ErrAuthFailed {
		t.Fatalf("addauth of %d bytes: %v", len(huge), h.Err)
	}
	c.ExpectClosed()

	c = rawclient.Dial(t, ts.addr)
	c.Connect(false)
	for i := 1; i < znode.MaxIdentities; i++ { // the ip identity is the first
		c.Request(jute.XidAuth, jute.OpAuth, &jute.AuthPacket{Scheme: "digest", Auth: []byte("user" + string(rune('A'+i)) + ":pw")})
		if h := c.Reply(nil); h.Err != jute.OK {
			t.Fatalf("addauth %d: %v", i, h.Err)
		}
	}
	c.Request(jute.XidAuth, jute.OpAuth, &jute.AuthPacket{Scheme: "digest", Auth: []byte("one-too-many:pw")})
	if h := c.Reply(nil); h.Err != jute.ErrAuthFailed {
		t.Fatalf("addauth past %d identities: %v", znode.MaxIdentities, h.Err)
	}
}
