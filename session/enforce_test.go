package session

import (
	"testing"

	"github.com/zkraft/zkraft/jute"
)

// TestEnforcedAuthentication: with enforce.auth.schemes=digest a session
// that authenticates first is served; one that sends anything else first
// gets SessionClosedRequireSaslAuth (-124) and its connection closed, as
// ZooKeeper's AuthenticationHelper does.
func TestEnforcedAuthentication(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.EnforceAuthSchemes = []string{"digest"} })
	ok := dialRaw(t, ts.addr)
	ok.connect(false)
	ok.request(-4, jute.OpAuth, &jute.AuthPacket{Type: 0, Scheme: "digest", Auth: []byte("u:p")})
	if h := ok.reply(nil); h.Err != jute.OK {
		t.Fatalf("auth: %v", h.Err)
	}
	ok.request(1, jute.OpExists, &jute.PathWatchRequest{Path: "/zookeeper"})
	if h := ok.reply(nil); h.Err != jute.OK {
		t.Fatalf("authenticated exists: %v", h.Err)
	}

	no := dialRaw(t, ts.addr)
	no.connect(false)
	no.request(1, jute.OpExists, &jute.PathWatchRequest{Path: "/zookeeper"})
	if h := no.reply(nil); h.Err != jute.ErrSessionClosedNoSASL || h.Xid != 1 {
		t.Fatalf("unauthenticated exists: %+v", h)
	}
	no.expectClosed()
}
