package session

import (
	"testing"

	"github.com/zkraft/zkraft/internal/testing/rawclient"
	"github.com/zkraft/zkraft/jute"
)

// TestEnforcedAuthentication: with enforce.auth.schemes=digest a session
// that authenticates first is served; one that sends anything else first
// gets SessionClosedRequireSaslAuth (-124) and its connection closed, as
// ZooKeeper's AuthenticationHelper does.
func TestEnforcedAuthentication(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.EnforceAuthSchemes = []string{"digest"} })
	ok := rawclient.Dial(t, ts.addr)
	ok.Connect(false)
	ok.Request(-4, jute.OpAuth, &jute.AuthPacket{Type: 0, Scheme: "digest", Auth: []byte("u:p")})
	if h := ok.Reply(nil); h.Err != jute.OK {
		t.Fatalf("auth: %v", h.Err)
	}
	ok.Request(1, jute.OpExists, &jute.PathWatchRequest{Path: "/zookeeper"})
	if h := ok.Reply(nil); h.Err != jute.OK {
		t.Fatalf("authenticated exists: %v", h.Err)
	}

	no := rawclient.Dial(t, ts.addr)
	no.Connect(false)
	no.Request(1, jute.OpExists, &jute.PathWatchRequest{Path: "/zookeeper"})
	if h := no.Reply(nil); h.Err != jute.ErrSessionClosedNoSASL || h.Xid != 1 {
		t.Fatalf("unauthenticated exists: %+v", h)
	}
	no.ExpectClosed()
}

// TestSASLFailure: a failed SASL exchange is answered AuthFailed and the
// connection closed; SessionClosedRequireSaslAuth (-124) when SASL is
// enforced; with allowSaslFailedClients (and SASL not enforced) OK with a
// null token and the session served on, unauthenticated.
func TestSASLFailure(t *testing.T) {
	badToken := []byte("not a digest response")
	for _, tc := range []struct {
		name     string
		mutate   func(*Config)
		want     jute.ErrCode
		survives bool
	}{
		{"default", func(*Config) {}, jute.ErrAuthFailed, false},
		{"sasl enforced", func(c *Config) { c.EnforceAuthSchemes = []string{"sasl"} }, jute.ErrSessionClosedNoSASL, false},
		{"allowSaslFailedClients", func(c *Config) { c.AllowSASLFailedClients = true }, jute.OK, true},
		{"allowed but enforced", func(c *Config) {
			c.AllowSASLFailedClients, c.EnforceAuthSchemes = true, []string{"sasl"}
		}, jute.ErrSessionClosedNoSASL, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := startServer(t, func(c *Config) { c.SASLUsers = map[string]string{"bob": "secret"}; tc.mutate(c) })
			c := rawclient.Dial(t, ts.addr)
			c.Connect(false)
			c.Request(1, jute.OpSASL, &jute.GetSASLRequest{Token: []byte{}}) // the challenge
			if h := c.Reply(&jute.SetSASLResponse{}); h.Err != jute.OK {
				t.Fatalf("challenge: %v", h.Err)
			}
			c.Request(2, jute.OpSASL, &jute.GetSASLRequest{Token: badToken})
			if h := c.Reply(nil); h.Err != tc.want {
				t.Fatalf("bad response: %v, want %v", h.Err, tc.want)
			}
			if !tc.survives {
				c.ExpectClosed()
				return
			}
			c.Request(3, jute.OpExists, &jute.PathWatchRequest{Path: "/zookeeper"})
			if h := c.Reply(nil); h.Err != jute.OK {
				t.Fatalf("exists after the failure: %v", h.Err)
			}
		})
	}
}
