package znode

import (
	"reflect"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

// TestAuditACLKeyInjective: an id holding NUL bytes must not make a
// one-entry ACL list intern as the same list as a two-entry one (issue 29,
// finding 3). Before the fix the attacker's list, stored first, became the
// ACL of the user's later node.
func TestAuditACLKeyInjective(t *testing.T) {
	h := newHarness(t, Options{})
	attacker := []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "digest", ID: "u:h\x0031\x005\x00worldanyone"}}}
	user := []jute.ACL{
		{Perms: jute.PermAll, ID: jute.Id{Scheme: "digest", ID: "u:h"}},
		{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}},
	}
	if ACLKey(attacker) == ACLKey(user) {
		t.Fatalf("ACLKey collides for %q and %q", attacker, user)
	}
	for _, c := range []struct {
		path string
		list []jute.ACL
	}{{"/attacker", attacker}, {"/user", user}} {
		if r := h.write(jute.OpCreate, &jute.CreateRequest{Path: c.path, ACL: c.list}); r.Err != jute.OK {
			t.Fatalf("create %s: %v", c.path, r.Err)
		}
	}
	super := []jute.Id{{Scheme: "super", ID: "x"}}
	for _, c := range []struct {
		path string
		list []jute.ACL
	}{{"/attacker", attacker}, {"/user", user}} {
		got, _, err := h.tree.GetACL(c.path, super)
		if err != nil || !reflect.DeepEqual(got, c.list) {
			t.Errorf("ACL of %s = %q, %v; want %q", c.path, got, err, c.list)
		}
	}
}
