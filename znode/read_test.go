package znode

import (
	"testing"

	"github.com/zkraft/zkraft/acl"
	"github.com/zkraft/zkraft/jute"
)

func TestReads(t *testing.T) {
	h := newHarness(t, Options{})
	bob := jute.Id{Scheme: "digest", ID: acl.DigestID("bob", "pw")}
	h.mustCreate("/r", []byte("data"), 0)
	h.mustCreate("/r/b", nil, 0)
	h.mustCreate("/r/a", nil, 0)
	h.mustCreate("/r/a/x", nil, 0)
	h.write(jute.OpCreate, &jute.CreateRequest{Path: "/secret", ACL: []jute.ACL{
		{Perms: jute.PermRead, ID: jute.Id{Scheme: "world", ID: "anyone"}},
		{Perms: jute.PermAll, ID: bob},
	}})
	h.write(jute.OpCreate, &jute.CreateRequest{Path: "/hidden", ACL: []jute.ACL{{Perms: jute.PermAll, ID: bob}}})
	h.write(jute.OpCreate, &jute.CreateRequest{Path: "/adminonly", ACL: []jute.ACL{
		{Perms: jute.PermAdmin, ID: jute.Id{Scheme: "world", ID: "anyone"}}}})

	if d, st, err := h.tree.GetData("/r", nil); err != nil || string(d) != "data" || st.NumChildren != 2 {
		t.Fatalf("getData %q %+v %v", d, st, err)
	}
	if c, _, err := h.tree.GetChildren("/r", nil); err != nil || len(c) != 2 || c[0] != "a" || c[1] != "b" {
		t.Fatalf("children %v %v", c, err)
	}
	if c, _, err := h.tree.GetChildren("/r/b", nil); err != nil || c == nil || len(c) != 0 {
		t.Fatalf("no children %v %v", c, err)
	}
	if c, _, _ := h.tree.GetChildren("", nil); len(c) != 5 {
		t.Fatalf("root alias %v", c)
	}
	errs := []struct {
		name string
		f    func() error
		want error
	}{
		{"exists missing", func() error { _, err := h.tree.Exists("/nope", nil); return err }, jute.ErrNoNode},
		{"exists nul", func() error { _, err := h.tree.Exists("/r\x00", nil); return err }, jute.ErrBadArguments},
		{"exists no read", func() error { _, err := h.tree.Exists("/hidden", ipIDs); return err }, jute.ErrNoAuth},
		{"exists bob", func() error { _, err := h.tree.Exists("/hidden", []jute.Id{bob}); return err }, nil},
		{"getData no read", func() error { _, _, err := h.tree.GetData("/hidden", ipIDs); return err }, jute.ErrNoAuth},
		{"getData super", func() error { _, _, err := h.tree.GetData("/hidden", []jute.Id{{Scheme: "super"}}); return err }, nil},
		{"getData bad path", func() error { _, _, err := h.tree.GetData("/r/", nil); return err }, jute.ErrNoNode},
		{"children no read", func() error { _, _, err := h.tree.GetChildren("/hidden", nil); return err }, jute.ErrNoAuth},
		{"getACL no perm", func() error { _, _, err := h.tree.GetACL("/hidden", nil); return err }, jute.ErrNoAuth},
		{"getACL admin only", func() error { _, _, err := h.tree.GetACL("/adminonly", nil); return err }, nil},
		{"getACL missing", func() error { _, _, err := h.tree.GetACL("/nope", nil); return err }, jute.ErrNoNode},
		{"count no read", func() error { _, err := h.tree.GetAllChildrenNumber("/hidden", nil); return err }, jute.ErrNoAuth},
		{"count missing", func() error { _, err := h.tree.GetAllChildrenNumber("/nope", nil); return err }, jute.ErrNoNode},
	}
	for _, c := range errs {
		if err := c.f(); err != c.want {
			t.Errorf("%s: %v want %v", c.name, err, c.want)
		}
	}
	// getACL masks digests for callers without ADMIN.
	l, _, _ := h.tree.GetACL("/secret", ipIDs)
	if l[1].ID.ID != "bob:x" {
		t.Errorf("masked %+v", l)
	}
	l, _, _ = h.tree.GetACL("/secret", []jute.Id{bob})
	if l[1].ID != bob {
		t.Errorf("unmasked %+v", l)
	}
	if got, _ := h.tree.NodeACL("/secret"); got[1].ID != bob {
		t.Error("masking modified the node")
	}
	for path, want := range map[string]int32{"/": 10, "/r": 3, "/r/a": 1, "/r/b": 0, "/zookeeper": 2} {
		if n, err := h.tree.GetAllChildrenNumber(path, nil); err != nil || n != want {
			t.Errorf("count %s = %d %v want %d", path, n, err, want)
		}
	}
}
