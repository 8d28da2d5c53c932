package e2e

// Containers and TTL nodes (a later milestone): create modes 4, 5 and 6.
// Every server the suite starts enables extended types.

import (
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkraft/zkraft/jute"
)

// reapWait bounds how long the container/TTL reaper may take; ZooKeeper
// runs it every znode.container.checkIntervalMs (1 s in this suite).
const reapWait = 10 * time.Second

// waitGone polls until path no longer exists and returns how long it took.
func waitGone(t *testing.T, c *client, path string, timeout time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for time.Since(start) < timeout {
		ok, _, err := c.Exists(path)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return time.Since(start)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s still exists after %v", path, timeout)
	return 0
}

// TestContainer covers create, Stat and reaping of container nodes.
func TestContainer(t *testing.T) {
	t.Parallel()
	c := connect(t, shared, sessionTimeout)
	root := testRoot(t, c)
	p := root + "/box"
	got, err := c.CreateContainer(p, []byte("d"), zk.FlagContainer, openACL)
	if err != nil || got != p {
		t.Fatalf("createContainer = %q, %v", got, err)
	}
	if st := mustStat(t, c, p); st.EphemeralOwner != 0 || st.DataLength != 1 {
		t.Errorf("container stat %+v: ephemeralOwner must read 0", st)
	}
	_, err = c.CreateContainer(p, nil, zk.FlagContainer, openACL)
	wantErr(t, "createContainer existing", err, zk.ErrNodeExists)
	_, err = c.CreateContainer(root+"/missing/box", nil, zk.FlagContainer, openACL)
	wantErr(t, "createContainer missing parent", err, zk.ErrNoNode)

	// Raw create2 reply of createContainer: path and Stat.
	r := newRawSession(t, shared, int32(sessionTimeout.Milliseconds()))
	var cr jute.Create2Response
	h := r.call(jute.OpCreateContainer, &jute.CreateRequest{Path: root + "/box2", ACL: rawOpenACL, Flags: jute.FlagContainer}, &cr)
	if h.Err != jute.OK || cr.Path != root+"/box2" || cr.Stat.Czxid != h.Zxid || cr.Stat.EphemeralOwner != 0 {
		t.Errorf("createContainer raw: err %d %+v", h.Err, cr)
	}

	// A container that never had children is kept.
	mustCreate(t, c, p+"/child", nil, 0)
	_, _, ch, err := c.ExistsW(p)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2500 * time.Millisecond)
	mustStat(t, c, root+"/box2")
	mustStat(t, c, p) // has a child
	if err := c.Delete(p+"/child", -1); err != nil {
		t.Fatal(err)
	}
	took := waitGone(t, c, p, reapWait)
	t.Logf("empty container reaped after %v", took)
	waitEvent(t, ch, zk.EventNodeDeleted, p)
	mustStat(t, c, root+"/box2")
}

// TestTTL covers TTL nodes: create, Stat, range checks and expiry.
func TestTTL(t *testing.T) {
	t.Parallel()
	c := connect(t, shared, sessionTimeout)
	root := testRoot(t, c)
	p := root + "/ttl"
	got, err := c.CreateTTL(p, []byte("x"), zk.FlagTTL, openACL, 1500*time.Millisecond)
	if err != nil || got != p {
		t.Fatalf("createTTL = %q, %v", got, err)
	}
	if st := mustStat(t, c, p); st.EphemeralOwner != 0 {
		t.Errorf("TTL stat %+v: ephemeralOwner must read 0", st)
	}
	seq, err := c.CreateTTL(root+"/seq-", nil, zk.FlagPersistentSequentialWithTTL, openACL, time.Hour)
	if err != nil || seq != root+"/seq-0000000001" {
		t.Errorf("sequential TTL = %q, %v", seq, err)
	}
	keep, err := c.CreateTTL(root+"/parent", nil, zk.FlagTTL, openACL, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, c, keep+"/child", nil, 0)

	r := newRawSession(t, shared, int32(sessionTimeout.Milliseconds()))
	for _, tc := range []struct {
		name  string
		flags int32
		ttl   int64
		want  jute.ErrCode
	}{
		{"ttl 0", jute.FlagPersistentTTL, 0, jute.ErrBadArguments},
		{"ttl negative", jute.FlagPersistentTTL, -5, jute.ErrBadArguments},
		{"ttl 2^40", jute.FlagPersistentTTL, 1 << 40, jute.ErrBadArguments},
		{"persistent flags", jute.FlagPersistent, 1000, jute.ErrBadArguments},
		{"ephemeral flags", jute.FlagEphemeral, 1000, jute.ErrBadArguments},
	} {
		req := &jute.CreateRequest{Path: root + "/bad", ACL: rawOpenACL, Flags: tc.flags, TTL: tc.ttl, HasTTL: true}
		if got := r.callErr(jute.OpCreateTTL, req); got != tc.want {
			t.Errorf("createTTL %s: err %d, want %d", tc.name, got, tc.want)
		}
	}
	var cr jute.Create2Response
	h := r.call(jute.OpCreateTTL, &jute.CreateRequest{Path: root + "/max", ACL: rawOpenACL, Flags: jute.FlagPersistentTTL, TTL: 1<<40 - 1, HasTTL: true}, &cr)
	if h.Err != jute.OK || cr.Path != root+"/max" || cr.Stat.Czxid != h.Zxid || cr.Stat.EphemeralOwner != 0 {
		t.Errorf("createTTL max ttl: err %d %+v", h.Err, cr)
	}

	took := waitGone(t, c, p, reapWait)
	t.Logf("TTL node reaped %v after the check started", took)
	mustStat(t, c, keep) // not empty
	mustStat(t, c, seq)  // 1 h to go
	mustNotExist(t, c, root+"/bad")
	if err := c.Delete(keep+"/child", -1); err != nil {
		t.Fatal(err)
	}
	waitGone(t, c, keep, reapWait)
}

// TestTTLRefreshedBySetData: a TTL counts from the last modification.
func TestTTLRefreshedBySetData(t *testing.T) {
	t.Parallel()
	c := connect(t, shared, sessionTimeout)
	root := testRoot(t, c)
	p, err := c.CreateTTL(root+"/t", nil, zk.FlagTTL, openACL, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := c.Set(p, []byte("touch"), -1); err != nil {
			t.Fatalf("set while the TTL is refreshed: %v", err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	mustStat(t, c, p)
	waitGone(t, c, p, reapWait)
}

// rawPath is a request body made of the path's bytes alone: ZooKeeper's
// container reaper encodes deleteContainer that way, not as a Jute string.
type rawPath string

// Encode implements jute.Record.
func (p rawPath) Encode(w *jute.Writer) { w.Raw([]byte(p)) }

// Decode implements jute.Record; nothing is ever decoded into a rawPath.
func (p rawPath) Decode(r *jute.Reader) error { return nil }

// TestDeleteContainerFromClient: opcode 20 is internal to the reaper and
// must be refused from clients (ZooKeeper's prep does no ACL check on it).
// The 3.8.0 oracle answers BadArguments to both body encodings here.
func TestDeleteContainerFromClient(t *testing.T) {
	t.Parallel()
	c := connect(t, shared, sessionTimeout)
	root := testRoot(t, c)
	p := root + "/box"
	if _, err := c.CreateContainer(p, nil, zk.FlagContainer, zk.WorldACL(zk.PermRead)); err != nil {
		t.Fatal(err)
	}
	for _, body := range []jute.Record{&jute.PathRequest{Path: p}, rawPath(p)} {
		r := newRawSession(t, shared, int32(sessionTimeout.Milliseconds()))
		xid := r.send(jute.OpDeleteContainer, body)
		reply, err := r.readAny()
		t.Logf("deleteContainer %T: %+v %v", body, reply.Hdr, err)
		if err == nil && reply.Hdr.Xid != xid {
			t.Errorf("reply xid %d, want %d", reply.Hdr.Xid, xid)
		}
		if err == nil && reply.Hdr.Err == jute.OK {
			t.Errorf("deleteContainer (%T) from a client succeeded: %+v", body, reply.Hdr)
		}
		mustStat(t, c, p)
	}
}

// TestTTLDisabled: without extended types createTTL answers Unimplemented
// and creates nothing; containers need no switch.
func TestTTLDisabled(t *testing.T) {
	t.Parallel()
	srv := StartServer(t, ServerOptions{NoExtendedTypes: true})
	c := newRawSession(t, srv, int32(sessionTimeout.Milliseconds()))
	req := &jute.CreateRequest{Path: "/ttl", ACL: rawOpenACL, Flags: jute.FlagPersistentTTL, TTL: 1000, HasTTL: true}
	xid := c.send(jute.OpCreateTTL, req)
	r, err := c.readAny()
	if err != nil || r.Hdr.Xid != xid || r.Hdr.Err != jute.ErrUnimplemented {
		t.Fatalf("createTTL without extended types: %+v %v, want err -6", r.Hdr, err)
	}
	gz := connect(t, srv, sessionTimeout)
	mustNotExist(t, gz, "/ttl")
	if _, err := gz.CreateContainer("/box", nil, zk.FlagContainer, openACL); err != nil {
		t.Errorf("createContainer without extended types: %v", err)
	}
}
