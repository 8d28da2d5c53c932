package znode

import (
	"testing"

	"github.com/zkraft/zkraft/acl"
	"github.com/zkraft/zkraft/jute"
)

func world(perms int32) []jute.ACL {
	return []jute.ACL{{Perms: perms, ID: jute.Id{Scheme: "world", ID: "anyone"}}}
}

// writeSetup builds: /p (open) with child /p/c; /nodel (no DELETE) with
// child /nodel/c; /nowrite (no WRITE, no ADMIN); /e (ephemeral).
func writeSetup(h *harness) {
	h.mustCreate("/p", nil, 0)
	h.mustCreate("/p/c", nil, 0)
	h.write(jute.OpCreate, &jute.CreateRequest{Path: "/nodel", ACL: world(jute.PermAll &^ jute.PermDelete)})
	h.mustCreate("/nodel/c", nil, 0)
	h.write(jute.OpCreate, &jute.CreateRequest{Path: "/nowrite", ACL: world(jute.PermRead | jute.PermCreate | jute.PermDelete)})
	h.mustCreate("/e", nil, 1)
}

func TestDeleteErrors(t *testing.T) {
	cases := []struct {
		name    string
		path    string
		version int32
		sess    int64
		want    jute.ErrCode
	}{
		{"ok", "/p/c", -1, 0, jute.OK},
		{"version match", "/p/c", 0, 0, jute.OK},
		{"expired", "/p/c", -1, 7, jute.ErrSessionExpired},
		{"root", "/", -1, 0, jute.ErrBadArguments},
		{"zookeeper", "/zookeeper", -1, 0, jute.ErrBadArguments},
		{"quota", "/zookeeper/quota", -1, 0, jute.ErrBadArguments},
		{"config", "/zookeeper/config", -1, 0, jute.ErrBadArguments},
		{"no slash", "p", -1, 0, jute.ErrBadArguments},
		{"empty", "", -1, 0, jute.ErrBadArguments},
		{"nul", "/p/c\x00", -1, 0, jute.ErrBadArguments},
		{"no parent", "/x/y", -1, 0, jute.ErrNoNode},
		{"no auth beats no node", "/nodel/zz", -1, 0, jute.ErrNoAuth},
		{"no auth", "/nodel/c", -1, 0, jute.ErrNoAuth},
		{"no node", "/p/zz", -1, 0, jute.ErrNoNode},
		{"trailing slash is no node", "/p/", -1, 0, jute.ErrNoNode},
		{"bad version", "/p/c", 3, 0, jute.ErrBadVersion},
		{"bad version beats not empty", "/p", 3, 0, jute.ErrBadVersion},
		{"not empty", "/p", -1, 0, jute.ErrNotEmpty},
		{"ephemeral", "/e", -1, 0, jute.OK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, Options{})
			writeSetup(h)
			if c.sess != 0 {
				h.sess = c.sess
			}
			r := h.write(jute.OpDelete, &jute.PathVersionRequest{Path: c.path, Version: c.version})
			if r.Err != c.want {
				t.Fatalf("got %v want %v", r.Err, c.want)
			}
			if r.Err != jute.OK {
				return
			}
			if r.Resp != nil {
				t.Fatalf("delete body %+v", r.Resp)
			}
			parent, _, _ := splitPath(c.path)
			parent = eventPath(parent)
			if len(r.Events) != 2 || r.Events[0].Path != c.path || r.Events[0].Type != jute.EventNodeDeleted ||
				r.Events[1].Path != parent || r.Events[1].Type != jute.EventNodeChildrenChanged {
				t.Fatalf("events %+v", r.Events)
			}
			if _, err := h.tree.Exists(c.path, nil); err != jute.ErrNoNode {
				t.Fatalf("still exists: %v", err)
			}
			if st := h.stat(parent); st.Pzxid != r.Zxid {
				t.Fatalf("parent pzxid %d want %d", st.Pzxid, r.Zxid)
			}
		})
	}
}

func TestSetDataErrors(t *testing.T) {
	cases := []struct {
		name    string
		path    string
		version int32
		sess    int64
		want    jute.ErrCode
	}{
		{"ok", "/p", -1, 0, jute.OK},
		{"version", "/p", 0, 0, jute.OK},
		{"root", "/", -1, 0, jute.OK},
		{"expired", "/p", -1, 7, jute.ErrSessionExpired},
		{"bad path", "/p/", -1, 0, jute.ErrBadArguments},
		{"bad path missing", "/q//x", -1, 0, jute.ErrBadArguments},
		{"no node", "/q", -1, 0, jute.ErrNoNode},
		{"no auth", "/nowrite", -1, 0, jute.ErrNoAuth},
		{"no auth beats bad version", "/nowrite", 5, 0, jute.ErrNoAuth},
		{"bad version", "/p", 5, 0, jute.ErrBadVersion},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, Options{})
			writeSetup(h)
			if c.sess != 0 {
				h.sess = c.sess
			}
			r := h.write(jute.OpSetData, &jute.SetDataRequest{Path: c.path, Data: []byte("zz"), Version: c.version})
			if r.Err != c.want {
				t.Fatalf("got %v want %v", r.Err, c.want)
			}
			if r.Err == jute.OK {
				st := r.Resp.(*jute.StatResponse).Stat
				if st.Version != 1 || st.Mzxid != r.Zxid || st.DataLength != 2 {
					t.Fatalf("stat %+v", st)
				}
			}
		})
	}
}

func TestSetACL(t *testing.T) {
	digest := jute.Id{Scheme: "digest", ID: acl.DigestID("bob", "pw")}
	cases := []struct {
		name    string
		path    string
		list    []jute.ACL
		version int32
		ids     []jute.Id
		want    jute.ErrCode
	}{
		{"ok", "/p", world(jute.PermRead), -1, nil, jute.OK},
		{"bad path", "/p/", world(1), -1, nil, jute.ErrBadArguments},
		{"invalid acl beats no node", "/q", nil, -1, nil, jute.ErrInvalidACL},
		{"no node", "/q", world(1), -1, nil, jute.ErrNoNode},
		{"no admin", "/nowrite", world(1), -1, nil, jute.ErrNoAuth},
		{"super", "/nowrite", world(1), -1, []jute.Id{{Scheme: "super"}}, jute.OK},
		{"bad aversion", "/p", world(1), 2, nil, jute.ErrBadVersion},
		{"auth expands", "/p", []jute.ACL{{Perms: 31, ID: jute.Id{Scheme: "auth"}}}, 0, []jute.Id{ipIDs[0], digest}, jute.OK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, Options{})
			writeSetup(h)
			h.ids = c.ids
			r := h.write(jute.OpSetACL, &jute.SetACLRequest{Path: c.path, ACL: c.list, Version: c.version})
			if r.Err != c.want {
				t.Fatalf("got %v want %v", r.Err, c.want)
			}
			if r.Err != jute.OK {
				return
			}
			if st := r.Resp.(*jute.StatResponse).Stat; st.Aversion != 1 {
				t.Fatalf("stat %+v", st)
			}
			if len(r.Events) != 0 {
				t.Fatalf("setACL fired %+v", r.Events)
			}
			got, _ := h.tree.NodeACL(c.path)
			if c.name == "auth expands" && (len(got) != 1 || got[0].ID != digest) {
				t.Fatalf("acl %+v", got)
			}
		})
	}
}

func TestACLInterning(t *testing.T) {
	h := newHarness(t, Options{})
	h.mustCreate("/a", nil, 0)
	h.mustCreate("/b", nil, 0)
	a, _ := h.tree.NodeACL("/a")
	b, _ := h.tree.NodeACL("/b")
	if &a[0] != &b[0] {
		t.Fatal("equal ACL lists are not shared")
	}
	h.write(jute.OpSetACL, &jute.SetACLRequest{Path: "/a", ACL: world(1), Version: -1})
	h.write(jute.OpSetACL, &jute.SetACLRequest{Path: "/b", ACL: world(1), Version: -1})
	a, _ = h.tree.NodeACL("/a")
	b, _ = h.tree.NodeACL("/b")
	if &a[0] != &b[0] || h.tree.acls.len() != 2 {
		t.Fatalf("interning after setACL: %d lists", h.tree.acls.len())
	}
}

func TestVersionWraps(t *testing.T) {
	h := newHarness(t, Options{})
	h.mustCreate("/v", nil, 0)
	h.tree.lookup("/v").version = 2147483647
	r := h.write(jute.OpSetData, &jute.SetDataRequest{Path: "/v", Version: 2147483647})
	if r.Err != jute.OK || r.Resp.(*jute.StatResponse).Stat.Version != -2147483648 {
		t.Fatalf("%+v", r)
	}
}

func TestDataNilVsEmpty(t *testing.T) {
	h := newHarness(t, Options{})
	h.mustCreate("/nil", nil, 0)
	h.mustCreate("/empty", []byte{}, 0)
	if d, _, _ := h.tree.GetData("/nil", nil); d != nil {
		t.Fatal("nil data became non-nil")
	}
	if d, _, _ := h.tree.GetData("/empty", nil); d == nil {
		t.Fatal("empty data became nil")
	}
}

func TestReconfigRewritesConfigNode(t *testing.T) {
	tr := NewTree(Options{})
	res := tr.Apply(&Txn{Type: jute.OpReconfig, Time: 77, Ids: []jute.Id{{Scheme: "super"}}, Req: []byte("server.1=h:1:2:participant;0.0.0.0:2181\n")}, 0x10)
	if res.Err != jute.OK {
		t.Fatal(res.Err)
	}
	got := res.Resp.(*jute.GetDataResponse)
	if string(got.Data) != "server.1=h:1:2:participant;0.0.0.0:2181\nversion=10" || got.Stat.Version != -1 || got.Stat.Mzxid != 0x10 || got.Stat.Mtime != 77 {
		t.Fatalf("%q %+v", got.Data, got.Stat)
	}
	if len(res.Events) != 1 || res.Events[0].Type != jute.EventNodeDataChanged || res.Events[0].Path != ConfigPath {
		t.Fatalf("events %+v", res.Events)
	}
	// The ensemble's first membership keeps its own version=0 line and an
	// mzxid of 0, as ZooKeeper serves its static configuration.
	first := NewTree(Options{})
	res = first.Apply(&Txn{Type: jute.OpReconfig, Time: 78, Ids: []jute.Id{{Scheme: "super"}}, Req: []byte("server.1=h:1:2:participant;0.0.0.0:2181\n" + InitialConfigVersion)}, 3)
	if got := res.Resp.(*jute.GetDataResponse); res.Err != jute.OK || string(got.Data) != "server.1=h:1:2:participant;0.0.0.0:2181\nversion=0" || got.Stat.Mzxid != 0 || got.Stat.Mtime != 78 || got.Stat.Version != -1 {
		t.Fatalf("initial config: %v %q %+v", res.Err, got.Data, got.Stat)
	}
	// /zookeeper/config is world:anyone:r: anyone else is refused.
	if res := tr.Apply(&Txn{Type: jute.OpReconfig, Req: []byte("x\n")}, 0x12); res.Err != jute.ErrNoAuth {
		t.Fatalf("reconfig without WRITE on /zookeeper/config: %v", res.Err)
	}
}
