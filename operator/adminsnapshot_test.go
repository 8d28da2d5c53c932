package operator

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/acl"
	"github.com/zkraft/zkraft/internal/testing/rawclient"
	"github.com/zkraft/zkraft/internal/zookeeper/datadir"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/session"
	"github.com/zkraft/zkraft/znode"
)

// TestAdminSnapshot: the snapshot command needs credentials with ALL on
// "/", and answers with the tree as a ZooKeeper snapshot (its sessions,
// ACL cache and znodes in ZooKeeper's stored form) and ZooKeeper 3.9's
// headers; a second request within the interval gets 429; streaming=false
// takes a snapshot of the member's own.
func TestAdminSnapshot(t *testing.T) {
	ts := startServer(t, func(c *session.Config) {
		c.SuperDigest = acl.DigestID("super", "pw")
		c.AdminSnapshotInterval = 300 * time.Millisecond
	})
	c := rawclient.Dial(t, ts.addr)
	sess := c.Connect(false)
	open := []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}
	alice := []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "digest", ID: acl.DigestID("alice", "pw")}}}
	for i, req := range []*jute.CreateRequest{
		{Path: "/a", Data: []byte("x"), ACL: open},
		{Path: "/a/b", Data: []byte("y"), ACL: alice},
		{Path: "/e", ACL: open, Flags: jute.FlagEphemeral},
		{Path: "/box", ACL: open, Flags: jute.FlagContainer},
	} {
		op := jute.OpCreate
		if req.Flags == jute.FlagContainer {
			op = jute.OpCreateContainer
		}
		c.Request(int32(i+1), op, req)
		if h := c.Reply(nil); h.Err != jute.OK {
			t.Fatalf("create %s: %v", req.Path, h.Err)
		}
	}
	c.Request(9, jute.OpSetACL, &jute.SetACLRequest{Path: "/", ACL: alice, Version: -1})
	if h := c.Reply(nil); h.Err != jute.OK {
		t.Fatalf("setACL /: %v", h.Err)
	}

	hs := httptest.NewServer(NewAdmin(ts.srv).Handler("/commands"))
	defer hs.Close()
	get := func(path, auth string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest("GET", hs.URL+path, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	for _, tc := range []struct {
		auth   string
		status int
		errMsg string
	}{
		{"", 401, "Auth info is missing for the command"},
		{"kerberos x", 401, "Not authenticated"},
		{"digest bob:pw", 403, "Not authorized"},
	} {
		resp, body := get("/commands/snapshot", tc.auth)
		if resp.StatusCode != tc.status || !strings.Contains(string(body), `"error" : "`+tc.errMsg+`"`) {
			t.Errorf("auth %q: %s %s, want %d %q", tc.auth, resp.Status, body, tc.status, tc.errMsg)
		}
	}

	resp, body := get("/commands/snap", "digest super:pw")
	if resp.StatusCode != 200 {
		t.Fatalf("snapshot as super: %s %s", resp.Status, body)
	}
	zxid, _ := strconv.ParseInt(strings.TrimPrefix(resp.Header.Get("last_zxid"), "0x"), 16, 64)
	if size := resp.Header.Get("snapshot_size"); size != strconv.Itoa(len(body)) || zxid < 5 {
		t.Fatalf("headers last_zxid %q snapshot_size %q for %d bytes", resp.Header.Get("last_zxid"), size, len(body))
	}
	snap, err := datadir.ReadSnapshot(body, zxid)
	if err != nil {
		t.Fatalf("the snapshot does not read as ZooKeeper's: %v", err)
	}
	byPath := map[string]datadir.Node{}
	for _, n := range snap.Nodes {
		byPath[n.Path] = n
	}
	if n := byPath["/a"]; string(n.Data) != "x" || n.ACL != datadir.OpenACL || n.Stat.Cversion != 1 {
		t.Errorf("/a: %+v (want the open ACL as -1, stored cversion 1)", n)
	}
	if n := byPath["/a/b"]; n.ACL < 1 || len(snap.ACLs[n.ACL]) != 1 || snap.ACLs[n.ACL][0] != alice[0] {
		t.Errorf("/a/b: ACL %d in %v", n.ACL, snap.ACLs)
	}
	if n := byPath["/e"]; n.Stat.EphemeralOwner != sess.SessionID {
		t.Errorf("/e: owner %#x, want %#x", n.Stat.EphemeralOwner, sess.SessionID)
	}
	if n := byPath["/box"]; n.Stat.EphemeralOwner != -1<<63 {
		t.Errorf("/box: owner %#x, want ZooKeeper's container mark", n.Stat.EphemeralOwner)
	}
	if len(snap.Sessions) != 1 || snap.Sessions[0].ID != sess.SessionID || snap.Sessions[0].Timeout != sess.TimeOut {
		t.Errorf("sessions %+v, want %#x with timeout %d", snap.Sessions, sess.SessionID, sess.TimeOut)
	}

	if resp, body := get("/commands/snapshot", "digest super:pw"); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("a second snapshot at once: %s %s, want 429", resp.Status, body)
	}
	time.Sleep(350 * time.Millisecond)
	resp, body = get("/commands/snapshot?streaming=false", "digest alice:pw")
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"error" : null`) {
		t.Errorf("streaming=false: %s %s", resp.Status, body)
	}
	if _, _, ok := ts.node.LastSnapshot(); !ok {
		t.Error("streaming=false took no snapshot")
	}
}

// TestAdminSnapshotNeedsEveryPermission: one permission on "/" is not
// enough to download the tree (7d71c65 let an anonymous "ip" caller have
// it with "/" at world:anyone:r, as ZooKeeper's checkACL with Perms.ALL
// does); the permissions an identity set holds together are, and skipACL
// opens nothing here.
func TestAdminSnapshotNeedsEveryPermission(t *testing.T) {
	for _, skip := range []bool{false, true} {
		ts := startServerTree(t, znode.Options{SkipACL: skip}, func(c *session.Config) {
			c.SuperDigest = acl.DigestID("super", "pw")
			c.AdminSnapshotInterval = time.Millisecond
		})
		c := rawclient.Dial(t, ts.addr)
		c.Connect(false)
		c.Request(1, jute.OpSetACL, &jute.SetACLRequest{Path: "/", Version: -1, ACL: []jute.ACL{
			{Perms: jute.PermRead, ID: jute.Id{Scheme: "world", ID: "anyone"}},
			{Perms: jute.PermAll &^ jute.PermRead, ID: jute.Id{Scheme: "digest", ID: acl.DigestID("alice", "pw")}},
		}})
		if h := c.Reply(nil); h.Err != jute.OK {
			t.Fatalf("setACL /: %v", h.Err)
		}
		hs := httptest.NewServer(NewAdmin(ts.srv).Handler("/commands"))
		for _, tc := range []struct {
			auth   string
			status int
		}{
			{"ip", http.StatusForbidden},
			{"digest bob:pw", http.StatusForbidden},
			{"digest alice:pw", http.StatusOK}, // read through world, the rest as alice
			{"digest super:pw", http.StatusOK},
		} {
			time.Sleep(10 * time.Millisecond) // past the rate limit's interval
			req, _ := http.NewRequest("GET", hs.URL+"/commands/snapshot", nil)
			req.Header.Set("Authorization", tc.auth)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Errorf("skipACL %v, %q: %s %.80s, want %d", skip, tc.auth, resp.Status, body, tc.status)
			}
		}
		hs.Close()
	}
}
