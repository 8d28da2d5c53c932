package znode

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

// TestNamesIdentity: the tree knows which identities its ACLs name, as
// nodes are created with an ACL, change it and go, through a clone and a
// snapshot and back; an id named twice in one list, or by many lists,
// is named until the last of them goes; a list of thousands of entries
// is indexed in linear time.
func TestNamesIdentity(t *testing.T) {
	h := newHarness(t, Options{})
	alice := jute.Id{Scheme: "digest", ID: "alice:hash"}
	bob := jute.Id{Scheme: "digest", ID: "bob:hash"}
	both := []jute.ACL{{Perms: jute.PermRead, ID: alice}, {Perms: jute.PermWrite, ID: alice}, {Perms: jute.PermAll, ID: bob}}
	onlyAlice := []jute.ACL{{Perms: jute.PermAll, ID: alice}}
	check := func(tr *Tree, when string, want map[jute.Id]bool) {
		t.Helper()
		for id, w := range want {
			if got := tr.NamesIdentity(id); got != w {
				t.Fatalf("%s: NamesIdentity(%v) = %v, want %v", when, id, got, w)
			}
		}
		if err := tr.Verify(); err != nil {
			t.Fatalf("%s: %v", when, err)
		}
	}
	world := jute.Id{Scheme: "world", ID: "anyone"}
	check(h.tree, "new tree", map[jute.Id]bool{world: true, alice: false, bob: false})
	mustOK := func(r *Result, what string) {
		t.Helper()
		if r.Err != jute.OK {
			t.Fatalf("%s: %v", what, r.Err)
		}
	}
	mustOK(h.write(jute.OpCreate, &jute.CreateRequest{Path: "/a", ACL: both}), "create /a")
	mustOK(h.write(jute.OpCreate, &jute.CreateRequest{Path: "/b", ACL: onlyAlice}), "create /b")
	check(h.tree, "created", map[jute.Id]bool{alice: true, bob: true})

	clone := h.tree.Clone()
	var buf bytes.Buffer
	if err := h.tree.WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	restored, err := ReadSnapshot(bytes.NewReader(buf.Bytes()), Options{})
	if err != nil {
		t.Fatal(err)
	}

	h.ids = []jute.Id{bob} // setACL needs ADMIN, which bob holds
	mustOK(h.write(jute.OpSetACL, &jute.SetACLRequest{Path: "/a", ACL: openACL, Version: -1}), "setACL /a")
	check(h.tree, "setACL", map[jute.Id]bool{alice: true, bob: false})
	mustOK(h.write(jute.OpDelete, &jute.PathVersionRequest{Path: "/b", Version: -1}), "delete /b")
	check(h.tree, "deleted", map[jute.Id]bool{alice: false, bob: false, world: true})
	check(clone, "clone", map[jute.Id]bool{alice: true, bob: true})
	check(restored, "snapshot", map[jute.Id]bool{alice: true, bob: true})

	big := make([]jute.ACL, 5000)
	for i := range big {
		big[i] = jute.ACL{Perms: jute.PermRead, ID: jute.Id{Scheme: "digest", ID: fmt.Sprintf("u%d:hash", i)}}
	}
	mustOK(h.write(jute.OpCreate, &jute.CreateRequest{Path: "/big", ACL: big}), "create /big")
	check(h.tree, "big", map[jute.Id]bool{big[0].ID: true, big[4999].ID: true, alice: false})
	mustOK(h.write(jute.OpDelete, &jute.PathVersionRequest{Path: "/big", Version: -1}), "delete /big")
	check(h.tree, "big gone", map[jute.Id]bool{big[0].ID: false, big[4999].ID: false})
}
