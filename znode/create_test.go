package znode

import (
	"testing"

	"github.com/zkraft/zkraft/jute"
)

func TestNewTreeStats(t *testing.T) {
	tr := NewTree(Options{})
	cases := []struct {
		path string
		want jute.Stat
	}{
		// Observed on ZooKeeper 3.8: stored cversion 0, so clients see -numChildren.
		{"/", jute.Stat{Cversion: -1, NumChildren: 1}},
		{"/zookeeper", jute.Stat{Cversion: -2, NumChildren: 2}},
		{"/zookeeper/quota", jute.Stat{}},
		{"/zookeeper/config", jute.Stat{Aversion: -1}}, // as ZooKeeper: aclVersion = -1
	}
	for _, c := range cases {
		st, err := tr.Exists(c.path, nil)
		if err != nil || st != c.want {
			t.Errorf("%s: %+v %v, want %+v", c.path, st, err, c.want)
		}
	}
	if l, _ := tr.NodeACL("/zookeeper/config"); len(l) != 1 || l[0].Perms != jute.PermRead {
		t.Errorf("config acl %+v", l)
	}
	s := tr.Stats()
	if s.Nodes != 4 || s.ZnodeCount != 5 || s.DataSize != 44 {
		t.Errorf("stats %+v, want 4 nodes, znode count 5, data size 44 (ZooKeeper's mntr)", s)
	}
}

// TestStatSequence replays the sequence checked against ZooKeeper 3.8.0
// (zxid 1 = createSession): the Stat values are the server's.
func TestStatSequence(t *testing.T) {
	h := newHarness(t, Options{})
	h.now = 500
	h.mustCreate("/t", nil, 0)                                    // 2
	h.mustCreate("/t/a", []byte("x"), 0)                          // 3
	if p := h.mustCreate("/t/s", nil, 2); p != "/t/s0000000001" { // 4
		t.Fatalf("seq %s", p)
	}
	if r := h.write(jute.OpDelete, &jute.PathVersionRequest{Path: "/t/a", Version: -1}); r.Err != jute.OK { // 5
		t.Fatal(r.Err)
	}
	if p := h.mustCreate("/t/s", nil, 2); p != "/t/s0000000002" { // 6
		t.Fatalf("seq %s", p)
	}
	want := jute.Stat{Czxid: 2, Mzxid: 2, Ctime: 500, Mtime: 500, Cversion: 4, NumChildren: 2, Pzxid: 6}
	if st := h.stat("/t"); st != want {
		t.Fatalf("/t %+v, want %+v", st, want)
	}
	// A failed multi changes nothing but consumes a zxid.
	r := h.write(jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{
		{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: "/t/m", ACL: openACL}},
		{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: "/t/m", ACL: openACL}},
	}}) // 7
	if r.Err != jute.OK || r.Zxid != 7 || h.tree.LastZxid() != 7 {
		t.Fatalf("multi %+v", r)
	}
	if st := h.stat("/t"); st != want {
		t.Fatalf("/t after failed multi %+v, want %+v", st, want)
	}
	h.now = 610
	r = h.write(jute.OpSetData, &jute.SetDataRequest{Path: "/t", Data: []byte("abc"), Version: -1})
	want.Mzxid, want.Mtime, want.Version, want.DataLength = 8, 610, 1, 3
	if r.Err != jute.OK || r.Resp.(*jute.StatResponse).Stat != want {
		t.Fatalf("setData %+v %+v", r.Err, r.Resp)
	}
	if len(r.Events) != 1 || r.Events[0].Path != "/t" || r.Events[0].Type != jute.EventNodeDataChanged {
		t.Fatalf("events %+v", r.Events)
	}
}

func TestCreateResponsesAndEvents(t *testing.T) {
	h := newHarness(t, Options{ExtendedTypes: true})
	h.mustCreate("/a", []byte{}, 0)
	cases := []struct {
		op    jute.Op
		req   *jute.CreateRequest
		path  string
		owner int64
	}{
		{jute.OpCreate, &jute.CreateRequest{Path: "/a/p", Flags: 0}, "/a/p", 0},
		{jute.OpCreate2, &jute.CreateRequest{Path: "/a/e", Flags: 1}, "/a/e", testSession},
		{jute.OpCreate2, &jute.CreateRequest{Path: "/a/es", Flags: 3}, "/a/es0000000002", testSession},
		{jute.OpCreateContainer, &jute.CreateRequest{Path: "/a/c", Flags: 4}, "/a/c", 0},
		{jute.OpCreateTTL, &jute.CreateRequest{Path: "/a/t", Flags: 5, TTL: 100, HasTTL: true}, "/a/t", 0},
		{jute.OpCreateTTL, &jute.CreateRequest{Path: "/a/ts", Flags: 6, TTL: 100, HasTTL: true}, "/a/ts0000000005", 0},
	}
	for _, c := range cases {
		c.req.ACL = openACL
		r := h.write(c.op, c.req)
		if r.Err != jute.OK {
			t.Fatalf("%s: %v", c.path, r.Err)
		}
		var got string
		if c.op == jute.OpCreate {
			got = r.Resp.(*jute.PathRequest).Path
		} else {
			cr := r.Resp.(*jute.Create2Response)
			got = cr.Path
			want := jute.Stat{Czxid: r.Zxid, Mzxid: r.Zxid, Pzxid: r.Zxid, Ctime: h.now, Mtime: h.now, EphemeralOwner: c.owner}
			if cr.Stat != want {
				t.Errorf("%s stat %+v want %+v", c.path, cr.Stat, want)
			}
		}
		if got != c.path {
			t.Errorf("path %s want %s", got, c.path)
		}
		wantEv := []Event{{c.path, jute.EventNodeCreated, openACL}, {"/a", jute.EventNodeChildrenChanged, openACL}}
		if len(r.Events) != 2 || r.Events[0].Path != wantEv[0].Path || r.Events[0].Type != wantEv[0].Type ||
			r.Events[1].Path != wantEv[1].Path || r.Events[1].Type != wantEv[1].Type || len(r.Events[0].ACL) != 1 {
			t.Errorf("%s events %+v", c.path, r.Events)
		}
	}
	// Children of the root report "/" as the parent.
	r := h.create("/b", nil, 0)
	if r.Events[1].Path != "/" {
		t.Errorf("root child event %+v", r.Events)
	}
	if got := h.tree.GetEphemerals(testSession, "/a/e"); len(got) != 2 || got[0] != "/a/e" || got[1] != "/a/es0000000002" {
		t.Errorf("ephemerals %v", got)
	}
	if s := h.tree.Stats(); s.Ephemerals != 2 {
		t.Errorf("stats %+v", s)
	}
}

func TestSequentialWrap(t *testing.T) {
	h := newHarness(t, Options{})
	h.mustCreate("/s", nil, 0)
	h.tree.lookup("/s").extend().cversion = 2147483647
	if p := h.mustCreate("/s/n", nil, 2); p != "/s/n2147483647" {
		t.Fatalf("got %s", p)
	}
	if p := h.mustCreate("/s/n", nil, 2); p != "/s/n-2147483648" {
		t.Fatalf("got %s", p)
	}
}

func TestCreateErrors(t *testing.T) {
	noCreate := []jute.ACL{{Perms: jute.PermAll &^ jute.PermCreate, ID: jute.Id{Scheme: "world", ID: "anyone"}}}
	badACL := []jute.ACL{{Perms: 31, ID: jute.Id{Scheme: "bogus", ID: "x"}}}
	authACL := []jute.ACL{{Perms: 31, ID: jute.Id{Scheme: "auth"}}}
	setup := func(h *harness) {
		h.mustCreate("/p", nil, 0)
		h.mustCreate("/e", nil, 1)
		h.write(jute.OpCreate, &jute.CreateRequest{Path: "/locked", ACL: noCreate})
		h.write(jute.OpCreate, &jute.CreateRequest{Path: "/locked/x", ACL: openACL}) // fails: no CREATE
	}
	cases := []struct {
		name string
		op   jute.Op
		req  jute.CreateRequest
		sess int64
		opts Options
		want jute.ErrCode
	}{
		{"ok", jute.OpCreate, jute.CreateRequest{Path: "/p/x", ACL: openACL}, 0, Options{}, jute.OK},
		{"bad flags", jute.OpCreate, jute.CreateRequest{Path: "/p/x", ACL: openACL, Flags: 7}, 0, Options{}, jute.ErrBadArguments},
		{"ttl disabled", jute.OpCreateTTL, jute.CreateRequest{Path: "/p/x", ACL: openACL, Flags: 5, TTL: 10, HasTTL: true}, 0, Options{}, jute.ErrUnimplemented},
		{"ttl disabled beats expired session", jute.OpCreateTTL, jute.CreateRequest{Path: "/p/x", ACL: openACL, Flags: 5, TTL: 10, HasTTL: true}, 9, Options{}, jute.ErrUnimplemented},
		{"ttl zero", jute.OpCreateTTL, jute.CreateRequest{Path: "/p/x", ACL: openACL, Flags: 5, TTL: 0, HasTTL: true}, 0, Options{ExtendedTypes: true}, jute.ErrBadArguments},
		{"ttl too big", jute.OpCreateTTL, jute.CreateRequest{Path: "/p/x", ACL: openACL, Flags: 5, TTL: 1 << 40, HasTTL: true}, 0, Options{ExtendedTypes: true}, jute.ErrBadArguments},
		{"ttl max", jute.OpCreateTTL, jute.CreateRequest{Path: "/p/x", ACL: openACL, Flags: 5, TTL: 1<<40 - 1, HasTTL: true}, 0, Options{ExtendedTypes: true}, jute.OK},
		{"ttl mode via create", jute.OpCreate, jute.CreateRequest{Path: "/p/x", ACL: openACL, Flags: 5}, 0, Options{ExtendedTypes: true}, jute.ErrBadArguments},
		{"ttl op with plain mode", jute.OpCreateTTL, jute.CreateRequest{Path: "/p/x", ACL: openACL, Flags: 0, TTL: 5, HasTTL: true}, 0, Options{ExtendedTypes: true}, jute.ErrBadArguments},
		{"expired session", jute.OpCreate, jute.CreateRequest{Path: "/p/x", ACL: openACL}, 9, Options{}, jute.ErrSessionExpired},
		{"relative", jute.OpCreate, jute.CreateRequest{Path: "p", ACL: openACL}, 0, Options{}, jute.ErrBadArguments},
		{"nul", jute.OpCreate, jute.CreateRequest{Path: "/p/x\x00", ACL: openACL}, 0, Options{}, jute.ErrBadArguments},
		{"invalid acl beats no parent", jute.OpCreate, jute.CreateRequest{Path: "/nope/x", ACL: badACL}, 0, Options{}, jute.ErrInvalidACL},
		{"empty acl", jute.OpCreate, jute.CreateRequest{Path: "/p/x"}, 0, Options{}, jute.ErrInvalidACL},
		{"auth without ids", jute.OpCreate, jute.CreateRequest{Path: "/p/x", ACL: authACL}, 0, Options{}, jute.ErrInvalidACL},
		{"no parent", jute.OpCreate, jute.CreateRequest{Path: "/nope/x", ACL: openACL}, 0, Options{}, jute.ErrNoNode},
		{"empty segment is no parent", jute.OpCreate, jute.CreateRequest{Path: "/nope//x", ACL: openACL}, 0, Options{}, jute.ErrNoNode},
		{"no auth beats exists", jute.OpCreate, jute.CreateRequest{Path: "/locked/x", ACL: openACL}, 0, Options{}, jute.ErrNoAuth},
		{"trailing slash", jute.OpCreate, jute.CreateRequest{Path: "/p/", ACL: openACL}, 0, Options{}, jute.ErrBadArguments},
		{"trailing slash sequential is fine", jute.OpCreate, jute.CreateRequest{Path: "/p/", ACL: openACL, Flags: 2}, 0, Options{}, jute.OK},
		{"dot segment", jute.OpCreate, jute.CreateRequest{Path: "/p/.", ACL: openACL}, 0, Options{}, jute.ErrBadArguments},
		{"exists", jute.OpCreate, jute.CreateRequest{Path: "/p", ACL: openACL}, 0, Options{}, jute.ErrNodeExists},
		{"root exists", jute.OpCreate, jute.CreateRequest{Path: "/", ACL: openACL}, 0, Options{}, jute.ErrNodeExists},
		{"exists beats ephemeral parent", jute.OpCreate, jute.CreateRequest{Path: "/e", ACL: openACL}, 0, Options{}, jute.ErrNodeExists},
		{"ephemeral parent", jute.OpCreate, jute.CreateRequest{Path: "/e/x", ACL: openACL}, 0, Options{}, jute.ErrNoChildrenForEphem},
		{"perms unvalidated", jute.OpCreate, jute.CreateRequest{Path: "/p/x", ACL: []jute.ACL{{Perms: 64, ID: jute.Id{Scheme: "world", ID: "anyone"}}}}, 0, Options{}, jute.OK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, c.opts)
			setup(h)
			if c.sess != 0 {
				h.sess = c.sess
			}
			r := h.write(c.op, &c.req)
			if r.Err != c.want {
				t.Fatalf("got %v want %v", r.Err, c.want)
			}
			if r.Err != jute.OK && (r.Resp != nil || r.Events != nil) {
				t.Fatalf("failure with body/events %+v", r)
			}
		})
	}
}
