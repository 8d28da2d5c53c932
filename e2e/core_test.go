package e2e

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkraft/zkraft/jute"
)

// TestCreateModes creates a node of every non-extended mode and checks the
// returned path, the Stat and the sequential suffixes.
func TestCreateModes(t *testing.T) {
	t.Parallel()
	c := connect(t, shared, sessionTimeout)
	root := testRoot(t, c)

	if got := mustCreate(t, c, root+"/p", []byte("x"), zk.FlagPersistent); got != root+"/p" {
		t.Errorf("persistent path = %q", got)
	}
	if st := mustStat(t, c, root+"/p"); st.EphemeralOwner != 0 || st.DataLength != 1 {
		t.Errorf("persistent stat = %+v", st)
	}
	if got := mustCreate(t, c, root+"/e", nil, zk.FlagEphemeral); got != root+"/e" {
		t.Errorf("ephemeral path = %q", got)
	}
	if st := mustStat(t, c, root+"/e"); st.EphemeralOwner != c.SessionID() {
		t.Errorf("ephemeral owner = %#x, want session %#x", st.EphemeralOwner, c.SessionID())
	}

	// The suffix is the parent's count of child creations so far (2: p, e).
	if got := mustCreate(t, c, root+"/s-", nil, zk.FlagSequence); got != root+"/s-0000000002" {
		t.Errorf("persistent sequential path = %q, want %s/s-0000000002", got, root)
	}
	if got := mustCreate(t, c, root+"/es-", nil, zk.FlagEphemeralSequential); got != root+"/es-0000000003" {
		t.Errorf("ephemeral sequential path = %q, want %s/es-0000000003", got, root)
	}
	if st := mustStat(t, c, root+"/es-0000000003"); st.EphemeralOwner != c.SessionID() {
		t.Errorf("ephemeral sequential owner = %#x", st.EphemeralOwner)
	}
	// Deletes do not rewind the counter.
	if err := c.Delete(root+"/p", -1); err != nil {
		t.Fatal(err)
	}
	if got := mustCreate(t, c, root+"/s-", nil, zk.FlagSequence); got != root+"/s-0000000004" {
		t.Errorf("after delete: path = %q, want %s/s-0000000004", got, root)
	}
	// A sequential name may be empty: the node is named by the suffix alone.
	if got := mustCreate(t, c, root+"/", nil, zk.FlagSequence); got != root+"/0000000005" {
		t.Errorf("empty sequential name: path = %q, want %s/0000000005", got, root)
	}
	st := mustStat(t, c, root)
	// 6 creates + 1 delete; numChildren = 5.
	if st.NumChildren != 5 || st.Cversion != 7 {
		t.Errorf("root stat numChildren=%d cversion=%d, want 5, 7", st.NumChildren, st.Cversion)
	}
	children, _, err := c.Children(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"0000000005", "e", "es-0000000003", "s-0000000002", "s-0000000004"}
	if fmt.Sprint(sorted(children)) != fmt.Sprint(want) {
		t.Errorf("children = %v, want %v", sorted(children), want)
	}
}

// TestSequentialSuffixUnderRoot checks the suffix under a node with many
// children and that a create of a sequential node never collides.
func TestSequentialSuffixUnderRoot(t *testing.T) {
	t.Parallel()
	c := connect(t, shared, sessionTimeout)
	root := testRoot(t, c)
	for i := 0; i < 12; i++ {
		got := mustCreate(t, c, root+"/n", nil, zk.FlagSequence)
		if want := fmt.Sprintf("%s/n%010d", root, i); got != want {
			t.Fatalf("create %d: %q, want %q", i, got, want)
		}
	}
	// A node named like a future suffix makes that sequential create fail.
	mustCreate(t, c, root+"/n0000000013", nil, 0) // creation 12
	if _, err := c.Create(root+"/n", nil, zk.FlagSequence, openACL); err != zk.ErrNodeExists {
		t.Errorf("colliding sequential create: err = %v, want node exists", err)
	}
	// The failed create did not consume a number.
	if got := mustCreate(t, c, root+"/x", nil, zk.FlagSequence); got != root+"/x0000000013" {
		t.Errorf("after collision: %q, want %s/x0000000013", got, root)
	}
}

// TestCreateErrors covers every error create can return.
func TestCreateErrors(t *testing.T) {
	t.Parallel()
	c := connect(t, shared, sessionTimeout)
	root := testRoot(t, c)
	mustCreate(t, c, root+"/a", nil, 0)
	mustCreate(t, c, root+"/eph", nil, zk.FlagEphemeral)

	_, err := c.Create(root+"/a", nil, 0, openACL)
	wantErr(t, "existing node", err, zk.ErrNodeExists)
	_, err = c.Create(root+"/missing/child", nil, 0, openACL)
	wantErr(t, "missing parent", err, zk.ErrNoNode)
	_, err = c.Create(root+"/missing/child", nil, zk.FlagSequence, openACL)
	wantErr(t, "missing parent, sequential", err, zk.ErrNoNode)
	_, err = c.Create(root+"/eph/child", nil, 0, openACL)
	wantErr(t, "child of ephemeral", err, zk.ErrNoChildrenForEphemerals)
	_, err = c.Create(root+"/eph/child", nil, zk.FlagEphemeral, openACL)
	wantErr(t, "ephemeral child of ephemeral", err, zk.ErrNoChildrenForEphemerals)
	_, err = c.Create(root+"/noacl", nil, 0, nil)
	wantErr(t, "empty ACL", err, zk.ErrInvalidACL)
	_, err = c.Create("/zookeeper", nil, 0, openACL)
	wantErr(t, "/zookeeper", err, zk.ErrNodeExists)
	_, err = c.Create("/", nil, 0, openACL)
	wantErr(t, "/", err, zk.ErrNodeExists)
	mustNotExist(t, c, root+"/noacl")
}

// TestBadPathsRaw sends malformed paths that go-zookeeper would refuse
// client-side. ZooKeeper resolves a write's parent before it validates the
// whole path, so a malformed path whose parent is missing answers NoNode;
// the BadArguments cases here all have an existing parent. The session
// survives every refusal.
func TestBadPathsRaw(t *testing.T) {
	t.Parallel()
	gz := connect(t, shared, sessionTimeout)
	root := testRoot(t, gz)
	mustCreate(t, gz, root+"/a", nil, 0)
	c := newRawSession(t, shared, int32(sessionTimeout.Milliseconds()))

	create := func(p string, flags int32) *jute.CreateRequest {
		return &jute.CreateRequest{Path: p, ACL: rawOpenACL, Flags: flags}
	}
	for _, tc := range []struct {
		op   jute.Op
		req  jute.Record
		want jute.ErrCode
	}{
		{jute.OpCreate, create("", 0), jute.ErrBadArguments},
		{jute.OpCreate, create("noslash", 0), jute.ErrBadArguments},
		{jute.OpCreate, create("/nul\x00byte", 0), jute.ErrBadArguments},
		{jute.OpCreate, create(root+"/", 0), jute.ErrBadArguments},
		{jute.OpCreate, create(root+"/.", 0), jute.ErrBadArguments},
		{jute.OpCreate, create(root+"/..", 0), jute.ErrBadArguments},
		{jute.OpCreate, create(root+"/a/.", jute.FlagEphemeral), jute.ErrBadArguments},
		{jute.OpCreate, create(root+"/ctrl\x01", 0), jute.ErrBadArguments},
		{jute.OpCreate, create(root+"/del\x7f", 0), jute.ErrBadArguments},
		{jute.OpCreate, create(root+"/priv\uf000", 0), jute.ErrBadArguments},
		{jute.OpCreate2, create(root+"/.", 0), jute.ErrBadArguments},
		{jute.OpCreate, create(root+"/nul\x00/", jute.FlagPersistentSequential), jute.ErrBadArguments},
		{jute.OpCreate, create("noslash", jute.FlagPersistentSequential), jute.ErrBadArguments},
		// Missing parent wins over the malformed last segment.
		{jute.OpCreate, create(root+"/missing/", 0), jute.ErrNoNode},
		{jute.OpCreate, create(root+"//x", 0), jute.ErrNoNode},
		{jute.OpCreate, create(root+"/./x", 0), jute.ErrNoNode},
		{jute.OpCreate, create(root+"//", jute.FlagPersistentSequential), jute.ErrNoNode},
		// Protected nodes.
		{jute.OpDelete, &jute.PathVersionRequest{Path: "/", Version: -1}, jute.ErrBadArguments},
		{jute.OpDelete, &jute.PathVersionRequest{Path: "/zookeeper", Version: -1}, jute.ErrBadArguments},
		{jute.OpDelete, &jute.PathVersionRequest{Path: "/zookeeper/quota", Version: -1}, jute.ErrBadArguments},
		{jute.OpDelete, &jute.PathVersionRequest{Path: "/zookeeper/config", Version: -1}, jute.ErrBadArguments},
		{jute.OpDelete, &jute.PathVersionRequest{Path: "noslash", Version: -1}, jute.ErrBadArguments},
		{jute.OpDelete, &jute.PathVersionRequest{Path: "/nul\x00byte", Version: -1}, jute.ErrBadArguments},
		{jute.OpDelete, &jute.PathVersionRequest{Path: root + "/a/", Version: -1}, jute.ErrNoNode},
		{jute.OpSetData, &jute.SetDataRequest{Path: "noslash", Version: -1}, jute.ErrBadArguments},
		{jute.OpSetData, &jute.SetDataRequest{Path: root + "/a/", Version: -1}, jute.ErrBadArguments},
		{jute.OpSetData, &jute.SetDataRequest{Path: root + "//a", Version: -1}, jute.ErrBadArguments},
		{jute.OpSetData, &jute.SetDataRequest{Path: "/nul\x00byte", Version: -1}, jute.ErrBadArguments},
	} {
		if got := c.callErr(tc.op, tc.req); got != tc.want {
			t.Errorf("op %d %+v: err %d, want %d", tc.op, tc.req, got, tc.want)
		}
	}
	c.ping()
	if ch, _, err := gz.Children(root); err != nil || fmt.Sprint(ch) != "[a]" {
		t.Errorf("children after refusals = %v, %v", ch, err)
	}
}

var rawOpenACL = []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}

// TestDelete covers delete with versions and every error it returns.
func TestDelete(t *testing.T) {
	t.Parallel()
	c := connect(t, shared, sessionTimeout)
	root := testRoot(t, c)
	mustCreate(t, c, root+"/a", nil, 0)
	mustCreate(t, c, root+"/a/b", nil, 0)
	if _, err := c.Set(root+"/a/b", []byte("1"), -1); err != nil {
		t.Fatal(err)
	}

	wantErr(t, "missing", c.Delete(root+"/nope", -1), zk.ErrNoNode)
	wantErr(t, "missing, versioned", c.Delete(root+"/nope", 3), zk.ErrNoNode)
	wantErr(t, "non-empty", c.Delete(root+"/a", -1), zk.ErrNotEmpty)
	wantErr(t, "non-empty, wrong version", c.Delete(root+"/a", 5), zk.ErrBadVersion)
	wantErr(t, "wrong version", c.Delete(root+"/a/b", 0), zk.ErrBadVersion)
	wantErr(t, "wrong version", c.Delete(root+"/a/b", 2), zk.ErrBadVersion)
	if err := c.Delete(root+"/a/b", 1); err != nil {
		t.Errorf("delete with matching version: %v", err)
	}
	if err := c.Delete(root+"/a", -1); err != nil {
		t.Errorf("delete with version -1: %v", err)
	}
	mustNotExist(t, c, root+"/a")
	wantErr(t, "twice", c.Delete(root+"/a", -1), zk.ErrNoNode)
}

// TestStatFields checks every Stat field through create, setData, child
// changes and setACL, via exists, getData, getChildren2 and setData.
func TestStatFields(t *testing.T) {
	t.Parallel()
	c := newRawSession(t, shared, int32(sessionTimeout.Milliseconds()))
	gz := connect(t, shared, sessionTimeout)
	root := testRoot(t, gz)
	p := root + "/n"

	var cr jute.Create2Response
	h := c.call(jute.OpCreate2, &jute.CreateRequest{Path: p, Data: []byte("hello"), ACL: rawOpenACL}, &cr)
	if h.Err != jute.OK {
		t.Fatalf("create2: %d", h.Err)
	}
	s0 := cr.Stat
	if cr.Path != p || s0.Czxid != h.Zxid || s0.Mzxid != h.Zxid || s0.Pzxid != h.Zxid ||
		s0.Ctime != s0.Mtime || s0.Ctime == 0 || s0.Version != 0 || s0.Cversion != 0 || s0.Aversion != 0 ||
		s0.EphemeralOwner != 0 || s0.DataLength != 5 || s0.NumChildren != 0 {
		t.Errorf("create2 reply zxid %#x: %s %+v", h.Zxid, cr.Path, s0)
	}
	if d := time.Now().UnixMilli() - s0.Ctime; d < -10000 || d > 10000 {
		t.Errorf("ctime %d is %d ms away from the wall clock", s0.Ctime, d)
	}
	// All reads agree with the create2 Stat.
	var sr jute.StatResponse
	if h := c.call(jute.OpExists, &jute.PathWatchRequest{Path: p}, &sr); h.Err != jute.OK || sr.Stat != s0 {
		t.Errorf("exists: err %d %+v, want %+v", h.Err, sr.Stat, s0)
	}
	var gd jute.GetDataResponse
	if h := c.call(jute.OpGetData, &jute.PathWatchRequest{Path: p}, &gd); h.Err != jute.OK || gd.Stat != s0 || string(gd.Data) != "hello" {
		t.Errorf("getData: err %d %q %+v", h.Err, gd.Data, gd.Stat)
	}
	var gc jute.GetChildren2Response
	if h := c.call(jute.OpGetChildren2, &jute.PathWatchRequest{Path: p}, &gc); h.Err != jute.OK || gc.Stat != s0 || len(gc.Children) != 0 {
		t.Errorf("getChildren2: err %d %v %+v", h.Err, gc.Children, gc.Stat)
	}

	// setData: mzxid and mtime move, version +1, czxid/ctime/pzxid stay.
	h = c.call(jute.OpSetData, &jute.SetDataRequest{Path: p, Data: []byte("hi"), Version: 0}, &sr)
	s1 := sr.Stat
	if h.Err != jute.OK || s1.Mzxid != h.Zxid || s1.Mzxid <= s0.Mzxid || s1.Czxid != s0.Czxid || s1.Pzxid != s0.Pzxid ||
		s1.Ctime != s0.Ctime || s1.Mtime < s0.Mtime || s1.Version != 1 || s1.DataLength != 2 || s1.Cversion != 0 {
		t.Errorf("setData: err %d zxid %#x %+v (before %+v)", h.Err, h.Zxid, s1, s0)
	}
	// Empty data has length 0.
	h = c.call(jute.OpSetData, &jute.SetDataRequest{Path: p, Data: []byte{}, Version: 1}, &sr)
	if h.Err != jute.OK || sr.Stat.DataLength != 0 || sr.Stat.Version != 2 {
		t.Errorf("setData empty: err %d %+v", h.Err, sr.Stat)
	}
	s2 := sr.Stat

	// A child create moves pzxid, cversion, numChildren, not mzxid/version.
	h = c.call(jute.OpCreate, &jute.CreateRequest{Path: p + "/c", ACL: rawOpenACL}, nil)
	childZxid := h.Zxid
	c.call(jute.OpExists, &jute.PathWatchRequest{Path: p}, &sr)
	s3 := sr.Stat
	if s3.Pzxid != childZxid || s3.Cversion != 1 || s3.NumChildren != 1 || s3.Mzxid != s2.Mzxid || s3.Version != 2 {
		t.Errorf("after child create (zxid %#x): %+v", childZxid, s3)
	}
	// setData on the child does not touch the parent.
	c.call(jute.OpSetData, &jute.SetDataRequest{Path: p + "/c", Data: []byte("z"), Version: -1}, nil)
	c.call(jute.OpExists, &jute.PathWatchRequest{Path: p}, &sr)
	if sr.Stat != s3 {
		t.Errorf("child setData changed parent: %+v, want %+v", sr.Stat, s3)
	}
	// A child delete moves pzxid and cversion again.
	h = c.call(jute.OpDelete, &jute.PathVersionRequest{Path: p + "/c", Version: -1}, nil)
	c.call(jute.OpExists, &jute.PathWatchRequest{Path: p}, &sr)
	if s := sr.Stat; s.Pzxid != h.Zxid || s.Cversion != 2 || s.NumChildren != 0 || s.Mzxid != s2.Mzxid {
		t.Errorf("after child delete (zxid %#x): %+v", h.Zxid, s)
	}
	// setACL: aversion +1, nothing else but the reply Stat.
	before := sr.Stat
	h = c.call(jute.OpSetACL, &jute.SetACLRequest{Path: p, ACL: rawOpenACL, Version: 0}, &sr)
	want := before
	want.Aversion = 1
	if h.Err != jute.OK || sr.Stat != want {
		t.Errorf("setACL: err %d %+v, want %+v", h.Err, sr.Stat, want)
	}
	// The go-zookeeper view agrees.
	if st := mustStat(t, gz, p); st != zk.Stat(want) {
		t.Errorf("go-zookeeper exists = %+v, want %+v", st, want)
	}
}

// TestGetSetData covers getData/setData values, versions and errors.
func TestGetSetData(t *testing.T) {
	t.Parallel()
	c := connect(t, shared, sessionTimeout)
	root := testRoot(t, c)
	p := root + "/d"
	mustCreate(t, c, p, []byte("v0"), 0)

	data, st, err := c.Get(p)
	if err != nil || string(data) != "v0" || st.Version != 0 {
		t.Fatalf("get = %q %+v %v", data, st, err)
	}
	_, err = c.Set(p, []byte("v1"), 1)
	wantErr(t, "set wrong version", err, zk.ErrBadVersion)
	st, err = c.Set(p, []byte("v1"), 0)
	if err != nil || st.Version != 1 {
		t.Fatalf("set = %+v %v", st, err)
	}
	st, err = c.Set(p, []byte("v2"), -1)
	if err != nil || st.Version != 2 {
		t.Fatalf("set any version = %+v %v", st, err)
	}
	_, err = c.Set(root+"/nope", nil, -1)
	wantErr(t, "set missing", err, zk.ErrNoNode)
	_, _, err = c.Get(root + "/nope")
	wantErr(t, "get missing", err, zk.ErrNoNode)
	ok, _, err := c.Exists(root + "/nope")
	if ok || err != nil {
		t.Errorf("exists missing = %v %v", ok, err)
	}

	// Binary data, and data of 1 MB minus headroom.
	bin := []byte{0, 1, 2, 0xff, 0}
	if _, err := c.Set(p, bin, -1); err != nil {
		t.Fatal(err)
	}
	if data, _, _ := c.Get(p); !bytes.Equal(data, bin) {
		t.Errorf("binary data = %x", data)
	}
	big := bytes.Repeat([]byte("z"), 1000*1000)
	if _, err := c.Set(p, big, -1); err != nil {
		t.Fatalf("set 1 MB: %v", err)
	}
	if data, st, _ := c.Get(p); !bytes.Equal(data, big) || st.DataLength != int32(len(big)) {
		t.Errorf("1 MB data: len %d, stat dataLength %d", len(data), st.DataLength)
	}
}

// TestNullData checks that null and empty data are distinct on the wire.
func TestNullData(t *testing.T) {
	t.Parallel()
	c := newRawSession(t, shared, int32(sessionTimeout.Milliseconds()))
	gz := connect(t, shared, sessionTimeout)
	root := testRoot(t, gz)

	// go-zookeeper encodes nil data as a null buffer (-1).
	for _, tc := range []struct {
		name string
		data []byte
		want []byte // raw buffer length prefix in getData reply
	}{{"null", nil, []byte{0xff, 0xff, 0xff, 0xff}}, {"empty", []byte{}, []byte{0, 0, 0, 0}}} {
		p := root + "/" + tc.name
		if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: p, Data: tc.data, ACL: rawOpenACL}, nil); h.Err != jute.OK {
			t.Fatalf("create %s: %d", p, h.Err)
		}
		xid := c.send(jute.OpGetData, &jute.PathWatchRequest{Path: p})
		r := c.recv()
		if r.Hdr.Xid != xid || r.Hdr.Err != jute.OK || len(r.Body) < 4 {
			t.Fatalf("getData %s: %+v", p, r.Hdr)
		}
		if !bytes.Equal(r.Body[:4], tc.want) {
			t.Errorf("%s data: length prefix %x, want %x", tc.name, r.Body[:4], tc.want)
		}
	}
}

// TestGetChildren covers getChildren (op 8) and getChildren2 (op 12).
func TestGetChildren(t *testing.T) {
	t.Parallel()
	gz := connect(t, shared, sessionTimeout)
	root := testRoot(t, gz)
	names := []string{"b", "a", "c10", "c9", "z"}
	for _, n := range names {
		mustCreate(t, gz, root+"/"+n, nil, 0)
	}
	mustCreate(t, gz, root+"/a/deeper", nil, 0)

	c := newRawSession(t, shared, int32(sessionTimeout.Milliseconds()))
	var sr jute.StringsResponse
	if h := c.call(jute.OpGetChildren, &jute.PathWatchRequest{Path: root}, &sr); h.Err != jute.OK {
		t.Fatalf("getChildren: %d", h.Err)
	}
	want := sorted(names)
	if fmt.Sprint(sorted(sr.Strings)) != fmt.Sprint(want) {
		t.Errorf("getChildren = %v, want %v", sr.Strings, want)
	}
	var gc jute.GetChildren2Response
	if h := c.call(jute.OpGetChildren2, &jute.PathWatchRequest{Path: root}, &gc); h.Err != jute.OK {
		t.Fatalf("getChildren2: %d", h.Err)
	}
	if fmt.Sprint(sorted(gc.Children)) != fmt.Sprint(want) || gc.Stat.NumChildren != 5 || gc.Stat.Cversion != 5 {
		t.Errorf("getChildren2 = %v %+v", gc.Children, gc.Stat)
	}
	if st := mustStat(t, gz, root); zk.Stat(gc.Stat) != st {
		t.Errorf("getChildren2 stat %+v != exists stat %+v", gc.Stat, st)
	}
	// Leaves have no children; missing nodes are NoNode for both ops.
	if h := c.call(jute.OpGetChildren, &jute.PathWatchRequest{Path: root + "/z"}, &sr); h.Err != jute.OK || len(sr.Strings) != 0 {
		t.Errorf("leaf: %d %v", h.Err, sr.Strings)
	}
	for _, op := range []jute.Op{jute.OpGetChildren, jute.OpGetChildren2} {
		if got := c.callErr(op, &jute.PathWatchRequest{Path: root + "/nope"}); got != jute.ErrNoNode {
			t.Errorf("op %d on missing node: %d", op, got)
		}
	}
	// The root lists /zookeeper.
	if h := c.call(jute.OpGetChildren, &jute.PathWatchRequest{Path: "/"}, &sr); h.Err != jute.OK {
		t.Fatalf("getChildren /: %d", h.Err)
	}
	found := false
	for _, s := range sr.Strings {
		found = found || s == "zookeeper"
	}
	if !found {
		t.Errorf("/ children %v lack zookeeper", sr.Strings)
	}
}

// TestSystemNodes checks /zookeeper and its children exactly as a fresh
// client sees them, including ZooKeeper's artefacts: Stats of zeros, a
// visible cversion of -2 on /zookeeper (stored 0, two children), and a
// read-only /zookeeper/config with aversion -1.
func TestSystemNodes(t *testing.T) {
	t.Parallel()
	c := connect(t, shared, sessionTimeout)
	children, _, err := c.Children("/zookeeper")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(sorted(children)) != "[config quota]" {
		t.Errorf("/zookeeper children = %v", children)
	}
	for _, tc := range []struct {
		path string
		stat zk.Stat
		acl  []zk.ACL
	}{
		{"/zookeeper", zk.Stat{Cversion: -2, NumChildren: 2}, openACL},
		{"/zookeeper/quota", zk.Stat{}, openACL},
		{"/zookeeper/config", zk.Stat{Aversion: -1}, zk.WorldACL(zk.PermRead)},
	} {
		data, st, err := c.Get(tc.path)
		if err != nil || len(data) != 0 || *st != tc.stat {
			t.Errorf("%s = %q %+v %v, want empty data and %+v", tc.path, data, *st, err, tc.stat)
		}
		acl, _, err := c.GetACL(tc.path)
		if err != nil || fmt.Sprint(acl) != fmt.Sprint(tc.acl) {
			t.Errorf("%s ACL = %v %v, want %v", tc.path, acl, err, tc.acl)
		}
	}
	_, err = c.Set("/zookeeper/config", []byte("x"), -1)
	wantErr(t, "setData /zookeeper/config", err, zk.ErrNoAuth)
	if st := mustStat(t, c, "/"); st.Czxid != 0 || st.Ctime != 0 || st.Version != 0 || st.Aversion != 0 {
		t.Errorf("/ stat %+v", st)
	}
}

// TestSync checks that sync echoes the path.
func TestSync(t *testing.T) {
	t.Parallel()
	c := connect(t, shared, sessionTimeout)
	root := testRoot(t, c)
	for _, p := range []string{"/", root, root + "/does-not-exist"} {
		got, err := c.Sync(p)
		if err != nil || got != p {
			t.Errorf("sync %s = %q, %v", p, got, err)
		}
	}
}

// TestConcurrentSequential races many sessions creating sequential children
// of one parent: every suffix is handed out exactly once, with no gaps.
func TestConcurrentSequential(t *testing.T) {
	t.Parallel()
	gz := connect(t, shared, sessionTimeout)
	root := testRoot(t, gz)
	const clients, each = 8, 40
	names := make(chan string, clients*each)
	errs := make(chan error, clients)
	var wg sync.WaitGroup
	for i := 0; i < clients; i++ {
		c := connect(t, shared, sessionTimeout)
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < each; j++ {
				flags := int32(zk.FlagSequence)
				if j%2 == 1 {
					flags = zk.FlagEphemeralSequential
				}
				p, err := c.Create(root+"/q-", []byte(fmt.Sprint(i)), flags, openACL)
				if err != nil {
					errs <- err
					return
				}
				names <- p
			}
		}(i)
	}
	wg.Wait()
	close(names)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	seen := make(map[string]bool)
	for p := range names {
		if seen[p] {
			t.Errorf("suffix handed out twice: %s", p)
		}
		seen[p] = true
	}
	for i := 0; i < clients*each; i++ {
		if p := fmt.Sprintf("%s/q-%010d", root, i); !seen[p] {
			t.Errorf("missing %s", p)
		}
	}
	if st := mustStat(t, gz, root); st.NumChildren != clients*each || st.Cversion != clients*each {
		t.Errorf("parent stat %+v", st)
	}
}

// TestNodeNames: unusual but valid names round-trip exactly.
func TestNodeNames(t *testing.T) {
	t.Parallel()
	c := connect(t, shared, sessionTimeout)
	root := testRoot(t, c)
	names := []string{"ünïcødé-名前", "with space", "...", ".hidden", "a.b", "zookeeper", "-", strings.Repeat("n", 4000)}
	for _, n := range names {
		p := root + "/" + n
		if got, err := c.Create(p, []byte(n), 0, openACL); err != nil || got != p {
			t.Errorf("create %q: %q, %v", n[:min(len(n), 20)], got, err)
			continue
		}
		if data, _, err := c.Get(p); err != nil || string(data) != n {
			t.Errorf("get %q: %v", n[:min(len(n), 20)], err)
		}
	}
	children, _, err := c.Children(root)
	if err != nil || fmt.Sprint(sorted(children)) != fmt.Sprint(sorted(names)) {
		t.Errorf("children = %d names, %v", len(children), err)
	}
	// A deep path.
	p := root
	for i := 0; i < 50; i++ {
		p += fmt.Sprintf("/d%d", i)
		mustCreate(t, c, p, nil, 0)
	}
	if st := mustStat(t, c, p); st.NumChildren != 0 {
		t.Errorf("deep node stat %+v", st)
	}
}

// TestLargeMulti applies 1000 operations in one multi under one zxid.
func TestLargeMulti(t *testing.T) {
	t.Parallel()
	c := connect(t, shared, sessionTimeout)
	root := testRoot(t, c)
	var ops []interface{}
	for i := 0; i < 500; i++ {
		p := fmt.Sprintf("%s/n%d", root, i)
		ops = append(ops, &zk.CreateRequest{Path: p, Data: []byte("x"), Acl: openACL},
			&zk.SetDataRequest{Path: p, Data: []byte("y"), Version: 0})
	}
	res, err := c.Multi(ops...)
	if err != nil || len(res) != 1000 {
		t.Fatalf("multi: %d results, %v", len(res), err)
	}
	zxid := res[1].Stat.Mzxid
	for i := 1; i < 1000; i += 2 {
		if res[i].Stat == nil || res[i].Stat.Mzxid != zxid || res[i].Stat.Czxid != zxid || res[i].Stat.Version != 1 {
			t.Fatalf("result %d: %+v, want czxid = mzxid = %#x, version 1", i, res[i].Stat, zxid)
		}
	}
	if st := mustStat(t, c, root); st.NumChildren != 500 || st.Pzxid != zxid {
		t.Errorf("root after multi: %+v", st)
	}
}
