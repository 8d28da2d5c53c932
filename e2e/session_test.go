package e2e

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkraft/zkraft/jute"
)

// waitRawEvent pings c until a notification matching typ and path arrives
// or timeout passes, and returns how long that took.
func waitRawEvent(t *testing.T, c *rawConn, typ jute.EventType, path string, timeout time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for time.Since(start) < timeout {
		c.ping()
		for _, ev := range c.Events {
			if ev.Type == typ && ev.Path == path {
				return time.Since(start)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no %v on %s within %v; events %v", typ, path, timeout, c.Events)
	return 0
}

// TestCloseSessionDeletesEphemerals checks that closeSession deletes every
// ephemeral of the session in one transaction before its reply, and fires
// the watches of other sessions.
func TestCloseSessionDeletesEphemerals(t *testing.T) {
	t.Parallel()
	gz := connect(t, shared, sessionTimeout)
	root := testRoot(t, gz)
	mustCreate(t, gz, root+"/sub", nil, 0)

	owner := newRawSession(t, shared, int32(sessionTimeout.Milliseconds()))
	for _, p := range []string{root + "/e1", root + "/e2", root + "/sub/e3"} {
		if h := owner.call(jute.OpCreate, &jute.CreateRequest{Path: p, ACL: rawOpenACL, Flags: jute.FlagEphemeral}, nil); h.Err != jute.OK {
			t.Fatalf("create %s: %d", p, h.Err)
		}
	}
	var cr jute.PathRequest
	if h := owner.call(jute.OpCreate, &jute.CreateRequest{Path: root + "/s-", ACL: rawOpenACL, Flags: jute.FlagEphemeralSequential}, &cr); h.Err != jute.OK {
		t.Fatalf("create ephemeral sequential: %d", h.Err)
	}
	mustCreate(t, gz, root+"/persistent", nil, 0)

	w := newRawSession(t, shared, int32(sessionTimeout.Milliseconds()))
	for _, p := range []string{root + "/e1", root + "/sub/e3", cr.Path} {
		if got := w.callErr(jute.OpGetData, &jute.PathWatchRequest{Path: p, Watch: true}); got != jute.OK {
			t.Fatalf("watch %s: %d", p, got)
		}
	}
	if got := w.callErr(jute.OpGetChildren, &jute.PathWatchRequest{Path: root + "/sub", Watch: true}); got != jute.OK {
		t.Fatal(got)
	}

	h := owner.call(jute.OpCloseSession, nil, nil)
	if h.Err != jute.OK {
		t.Fatalf("closeSession: %d", h.Err)
	}
	owner.expectClosed()
	// Gone as soon as closeSession has been answered.
	for _, p := range []string{root + "/e1", root + "/e2", root + "/sub/e3", cr.Path} {
		mustNotExist(t, gz, p)
	}
	mustStat(t, gz, root+"/persistent")
	w.ping()
	var got []string
	for _, ev := range w.Events {
		got = append(got, fmt.Sprintf("%d %s", ev.Type, ev.Path))
		checkEventZxid(t, ev, h.Zxid)
	}
	sort.Strings(got)
	want := []string{
		fmt.Sprintf("%d %s", jute.EventNodeDeleted, root+"/e1"),
		fmt.Sprintf("%d %s", jute.EventNodeDeleted, root+"/sub/e3"),
		fmt.Sprintf("%d %s", jute.EventNodeDeleted, cr.Path),
		fmt.Sprintf("%d %s", jute.EventNodeChildrenChanged, root+"/sub"),
	}
	sort.Strings(want)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events = %v, want %v", got, want)
	}
	// One transaction: the parents' pzxid is the closeSession zxid.
	if st := mustStat(t, gz, root+"/sub"); st.Pzxid != h.Zxid {
		t.Errorf("sub pzxid %#x, want closeSession zxid %#x", st.Pzxid, h.Zxid)
	}
}

// TestCloseSessionGoZookeeper checks the same through go-zookeeper's Close.
func TestCloseSessionGoZookeeper(t *testing.T) {
	t.Parallel()
	a := connect(t, shared, sessionTimeout)
	b := connect(t, shared, sessionTimeout)
	root := testRoot(t, b)
	mustCreate(t, a, root+"/e", nil, zk.FlagEphemeral)
	_, _, ch, err := b.ExistsW(root + "/e")
	if err != nil {
		t.Fatal(err)
	}
	// go-zookeeper's Close waits at most a second for the closeSession
	// reply: on a slow disk the close commits after it returns, so the
	// watch's event, not Close, says when the ephemeral went.
	a.Close()
	waitEvent(t, ch, zk.EventNodeDeleted, root+"/e")
	mustNotExist(t, b, root+"/e")
}

// TestSessionExpiry cuts a client off: after the session timeout its
// ephemerals are deleted and other sessions' watches fire; when the client
// comes back it is told its session expired.
func TestSessionExpiry(t *testing.T) {
	t.Parallel()
	a := connect(t, shared, shortTimeout)
	gz := connect(t, shared, sessionTimeout)
	root := testRoot(t, gz)
	mustCreate(t, a, root+"/e", nil, zk.FlagEphemeral)
	mustCreate(t, a, root+"/p", nil, 0)
	oldID := a.SessionID()

	w := newRawSession(t, shared, int32(sessionTimeout.Milliseconds()))
	if got := w.callErr(jute.OpExists, &jute.PathWatchRequest{Path: root + "/e", Watch: true}); got != jute.OK {
		t.Fatal(got)
	}
	if got := w.callErr(jute.OpGetChildren, &jute.PathWatchRequest{Path: root, Watch: true}); got != jute.OK {
		t.Fatal(got)
	}

	a.dialer.drop(true /* block */)
	took := waitRawEvent(t, w, jute.EventNodeDeleted, root+"/e", shortTimeout+2*tickTimeMs*time.Millisecond+4*time.Second)
	// The client last talked to the server at most a third of the timeout
	// before the cut; ZooKeeper expires up to one tick after the timeout.
	if took < shortTimeout*2/3-500*time.Millisecond {
		t.Errorf("session expired %v after the cut, before its %v timeout", took, shortTimeout)
	}
	t.Logf("expired %v after the cut", took)
	waitRawEvent(t, w, jute.EventNodeChildrenChanged, root, time.Second)
	mustNotExist(t, gz, root+"/e")
	mustStat(t, gz, root+"/p")

	a.dialer.unblock()
	a.waitState(t, zk.StateExpired, 10*time.Second)
	// go-zookeeper then opens a fresh session.
	a.waitState(t, zk.StateHasSession, 10*time.Second)
	if a.SessionID() == oldID || a.SessionID() == 0 {
		t.Errorf("session after expiry = %#x (old %#x)", a.SessionID(), oldID)
	}
}

// TestSessionResume drops a client's connection and lets it reconnect
// within the timeout: same session, ephemerals kept, watches re-armed with
// catch-up events for what changed while it was away.
func TestSessionResume(t *testing.T) {
	t.Parallel()
	a := connect(t, shared, 6*time.Second)
	m := connect(t, shared, sessionTimeout)
	root := testRoot(t, m)
	mustCreate(t, m, root+"/n", nil, 0)
	mustCreate(t, m, root+"/stay", nil, 0)
	mustCreate(t, m, root+"/gone", nil, 0)
	mustCreate(t, a, root+"/e", nil, zk.FlagEphemeral)
	id := a.SessionID()

	_, _, dataCh, err := a.GetW(root + "/n")
	if err != nil {
		t.Fatal(err)
	}
	_, _, existCh, err := a.ExistsW(root + "/m")
	if err != nil {
		t.Fatal(err)
	}
	_, _, childCh, err := a.ChildrenW(root)
	if err != nil {
		t.Fatal(err)
	}
	_, _, stayCh, err := a.GetW(root + "/stay")
	if err != nil {
		t.Fatal(err)
	}
	_, _, goneCh, err := a.GetW(root + "/gone")
	if err != nil {
		t.Fatal(err)
	}

	a.dialer.drop(true /* block */)
	a.waitState(t, zk.StateDisconnected, 5*time.Second)
	if _, err := m.Set(root+"/n", []byte("changed"), -1); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, m, root+"/m", nil, 0)
	if err := m.Delete(root+"/gone", -1); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	a.dialer.unblock()
	a.waitState(t, zk.StateHasSession, 10*time.Second)
	if a.SessionID() != id {
		t.Fatalf("session after reconnect = %#x, want %#x", a.SessionID(), id)
	}
	waitEvent(t, dataCh, zk.EventNodeDataChanged, root+"/n")
	waitEvent(t, existCh, zk.EventNodeCreated, root+"/m")
	waitEvent(t, childCh, zk.EventNodeChildrenChanged, root)
	waitEvent(t, goneCh, zk.EventNodeDeleted, root+"/gone")
	// An unchanged node's watch is re-armed, not fired.
	noEvent(t, stayCh, quiet)
	if _, err := m.Set(root+"/stay", []byte("now"), -1); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, stayCh, zk.EventNodeDataChanged, root+"/stay")

	if st := mustStat(t, m, root+"/e"); st.EphemeralOwner != id {
		t.Errorf("ephemeral owner after resume = %#x, want %#x", st.EphemeralOwner, id)
	}
	if a.dialer.dials.Load() < 2 {
		t.Errorf("client never redialed")
	}
}

// TestReconnectRaw resumes a session on a second connection by id and
// password: the reply carries the same session, and the server closes the
// first connection.
func TestReconnectRaw(t *testing.T) {
	t.Parallel()
	first := newRawSession(t, shared, 6000)
	gz := connect(t, shared, sessionTimeout)
	root := testRoot(t, gz)
	if h := first.call(jute.OpCreate, &jute.CreateRequest{Path: root + "/e", ACL: rawOpenACL, Flags: jute.FlagEphemeral}, nil); h.Err != jute.OK {
		t.Fatal(h.Err)
	}
	zxid := first.ping()

	second := dialRaw(t, shared)
	resp := second.handshake(&jute.ConnectRequest{LastZxidSeen: zxid, TimeOut: 6000, SessionID: first.SessionID, Passwd: first.Passwd, HasReadOnly: true})
	if resp.SessionID != first.SessionID || resp.TimeOut != 6000 || !bytes.Equal(resp.Passwd, first.Passwd) {
		t.Fatalf("resume = %+v, want session %#x", resp, first.SessionID)
	}
	first.expectClosed()
	second.ping()
	if st := mustStat(t, gz, root+"/e"); st.EphemeralOwner != first.SessionID {
		t.Errorf("ephemeral owner = %#x", st.EphemeralOwner)
	}
	second.closeSession()
	mustNotExist(t, gz, root+"/e")
}

// TestResumeRefused covers a wrong password, an unknown session and a
// closed session: each is answered as expired (timeout 0, session 0, 16
// zero bytes of password) and the connection is closed; the real session
// survives. (ZooKeeper closes the live connection of a session before it
// checks the password of a resume attempt, so a wrong password kicks the
// rightful client off; the test allows that but requires the session, its
// ephemerals and its password to stay valid.)
func TestResumeRefused(t *testing.T) {
	t.Parallel()
	live := newRawSession(t, shared, 6000)
	gz := connect(t, shared, sessionTimeout)
	root := testRoot(t, gz)
	if h := live.call(jute.OpCreate, &jute.CreateRequest{Path: root + "/e", ACL: rawOpenACL, Flags: jute.FlagEphemeral}, nil); h.Err != jute.OK {
		t.Fatal(h.Err)
	}
	closed := newRawSession(t, shared, 6000)
	closed.closeSession()

	wrong := append([]byte(nil), live.Passwd...)
	wrong[0] ^= 0xff
	for _, tc := range []struct {
		name   string
		id     int64
		passwd []byte
	}{
		{"wrong password", live.SessionID, wrong},
		{"short password", live.SessionID, live.Passwd[:8]},
		{"unknown session", live.SessionID ^ 0x5a5a5a, live.Passwd},
		{"closed session", closed.SessionID, closed.Passwd},
	} {
		c := dialRaw(t, shared)
		resp, body, err := c.tryHandshake(&jute.ConnectRequest{TimeOut: 6000, SessionID: tc.id, Passwd: tc.passwd, HasReadOnly: true})
		if err != nil {
			t.Errorf("%s: %v (body %x)", tc.name, err, body)
			continue
		}
		if resp.TimeOut != 0 || resp.SessionID != 0 || !bytes.Equal(resp.Passwd, make([]byte, 16)) {
			t.Errorf("%s: response %+v, want timeout 0, session 0, 16 zero bytes", tc.name, resp)
		}
		c.expectClosed()
	}
	if st := mustStat(t, gz, root+"/e"); st.EphemeralOwner != live.SessionID {
		t.Errorf("live session's ephemeral owner = %#x", st.EphemeralOwner)
	}
	again := dialRaw(t, shared)
	resp := again.handshake(&jute.ConnectRequest{TimeOut: 6000, SessionID: live.SessionID, Passwd: live.Passwd, HasReadOnly: true})
	if resp.SessionID != live.SessionID {
		t.Fatalf("resume with the right password after refusals = %+v", resp)
	}
	again.ping()
}

// TestSessionTimeoutNegotiation checks clamping to [2, 20] x tickTime.
func TestSessionTimeoutNegotiation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ ask, want int32 }{
		{1, minSessionTimeoutMs},
		{1000, minSessionTimeoutMs},
		{minSessionTimeoutMs, minSessionTimeoutMs},
		{5000, 5000},
		{maxSessionTimeoutMs, maxSessionTimeoutMs},
		{100000, maxSessionTimeoutMs},
	} {
		c := newRawSession(t, shared, tc.ask)
		if c.Timeout != tc.want {
			t.Errorf("asked %d ms: negotiated %d, want %d", tc.ask, c.Timeout, tc.want)
		}
		if len(c.Passwd) != 16 {
			t.Errorf("password is %d bytes, want 16", len(c.Passwd))
		}
		c.closeSession()
	}
	// go-zookeeper adopts the negotiated value.
	c := connect(t, shared, time.Second)
	c.Close()
}

// TestKeepAlive: a session that only pings (or only reads) outlives its
// timeout several times over.
func TestKeepAlive(t *testing.T) {
	t.Parallel()
	gz := connect(t, shared, sessionTimeout)
	root := testRoot(t, gz)
	pinger := newRawSession(t, shared, minSessionTimeoutMs)
	reader := newRawSession(t, shared, minSessionTimeoutMs)
	for i, c := range []*rawConn{pinger, reader} {
		p := fmt.Sprintf("%s/e%d", root, i)
		if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: p, ACL: rawOpenACL, Flags: jute.FlagEphemeral}, nil); h.Err != jute.OK {
			t.Fatal(h.Err)
		}
	}
	end := time.Now().Add(2*time.Duration(minSessionTimeoutMs)*time.Millisecond + time.Second)
	for time.Now().Before(end) {
		pinger.ping()
		if got := reader.callErr(jute.OpExists, &jute.PathWatchRequest{Path: root}); got != jute.OK {
			t.Fatalf("reader: %d", got)
		}
		time.Sleep(time.Second)
	}
	for i, c := range []*rawConn{pinger, reader} {
		if st := mustStat(t, gz, fmt.Sprintf("%s/e%d", root, i)); st.EphemeralOwner != c.SessionID {
			t.Errorf("e%d owner %#x", i, st.EphemeralOwner)
		}
	}
}

// TestIdleSessionExpires: a connected client that sends nothing loses its
// session after the timeout; the server closes the connection and a later
// resume is refused.
func TestIdleSessionExpires(t *testing.T) {
	t.Parallel()
	gz := connect(t, shared, sessionTimeout)
	root := testRoot(t, gz)
	idle := newRawSession(t, shared, minSessionTimeoutMs)
	if h := idle.call(jute.OpCreate, &jute.CreateRequest{Path: root + "/e", ACL: rawOpenACL, Flags: jute.FlagEphemeral}, nil); h.Err != jute.OK {
		t.Fatal(h.Err)
	}
	start := time.Now()
	limit := time.Duration(minSessionTimeoutMs+2*tickTimeMs)*time.Millisecond + 3*time.Second
	idle.conn.SetReadDeadline(start.Add(limit))
	_, err := jute.ReadFrame(idle.conn, nil, jute.DefaultMaxBuffer)
	took := time.Since(start)
	if err == nil {
		t.Fatalf("idle connection received a frame")
	}
	if took >= limit {
		t.Fatalf("idle connection still open after %v", took)
	}
	if took < time.Duration(minSessionTimeoutMs)*time.Millisecond-500*time.Millisecond {
		t.Errorf("idle session closed after %v, before its %d ms timeout", took, minSessionTimeoutMs)
	}
	t.Logf("idle session closed after %v (%v)", took, err)
	mustNotExist(t, gz, root+"/e")
	c := dialRaw(t, shared)
	resp, _, err := c.tryHandshake(&jute.ConnectRequest{TimeOut: minSessionTimeoutMs, SessionID: idle.SessionID, Passwd: idle.Passwd, HasReadOnly: true})
	if err != nil || resp.SessionID != 0 || resp.TimeOut != 0 {
		t.Errorf("resume of the expired session = %+v, %v; want refused", resp, err)
	}
}

// TestAuthPipelined: an auth packet takes effect for the requests written
// right behind it, in the same burst.
func TestAuthPipelined(t *testing.T) {
	t.Parallel()
	gz := connect(t, shared, sessionTimeout)
	root := testRoot(t, gz)
	if err := gz.AddAuth("digest", []byte("pipe:pw")); err != nil {
		t.Fatal(err)
	}
	if _, err := gz.Create(root+"/locked", []byte("x"), 0, zk.DigestACL(zk.PermAll, "pipe", "pw")); err != nil {
		t.Fatal(err)
	}
	c := newRawSession(t, shared, int32(sessionTimeout.Milliseconds()))
	var w jute.Writer
	w.Raw(encodeRequest(1, jute.OpGetData, &jute.PathWatchRequest{Path: root + "/locked"}))
	w.Raw(encodeRequest(jute.XidAuth, jute.OpAuth, &jute.AuthPacket{Scheme: "digest", Auth: []byte("pipe:pw")}))
	w.Raw(encodeRequest(2, jute.OpGetData, &jute.PathWatchRequest{Path: root + "/locked"}))
	if err := c.writeRaw(w.Buf); err != nil {
		t.Fatal(err)
	}
	// ZooKeeper answers an auth packet as soon as it reads it, ahead of the
	// replies still in its pipeline; zkraft keeps it in order. Either way
	// the request before it runs unauthenticated and the one after it
	// authenticated, and the ordinary replies keep their order.
	var order []int32
	for i := 0; i < 3; i++ {
		r := c.recv()
		order = append(order, r.Hdr.Xid)
		want := map[int32]jute.ErrCode{1: jute.ErrNoAuth, jute.XidAuth: jute.OK, 2: jute.OK}[r.Hdr.Xid]
		if r.Hdr.Err != want {
			t.Errorf("reply %+v, want err %d", r.Hdr, want)
		}
	}
	if s := fmt.Sprint(order); s != "[1 -4 2]" && s != "[-4 1 2]" {
		t.Errorf("reply order %s", s)
	}
}

// TestCreateAfterCloseSession pipelines ephemeral creates around a
// closeSession: nothing owned by the closed session may survive it.
func TestCreateAfterCloseSession(t *testing.T) {
	t.Parallel()
	gz := connect(t, shared, sessionTimeout)
	root := testRoot(t, gz)
	c := newRawSession(t, shared, int32(sessionTimeout.Milliseconds()))
	eph := func(name string) *jute.CreateRequest {
		return &jute.CreateRequest{Path: root + "/" + name, ACL: rawOpenACL, Flags: jute.FlagEphemeral}
	}
	var w jute.Writer
	w.Raw(encodeRequest(1, jute.OpCreate, eph("before")))
	w.Raw(encodeRequest(2, jute.OpCloseSession, nil))
	w.Raw(encodeRequest(3, jute.OpCreate, eph("after")))
	w.Raw(encodeRequest(4, jute.OpCreate, create(root+"/persistent-after")))
	if err := c.writeRaw(w.Buf); err != nil {
		t.Fatal(err)
	}
	got := c.expectClosed()
	if len(got) < 2 || got[0].Hdr.Xid != 1 || got[0].Hdr.Err != jute.OK || got[1].Hdr.Xid != 2 || got[1].Hdr.Err != jute.OK {
		t.Fatalf("replies %+v, want create then closeSession", got)
	}
	for _, r := range got[2:] {
		if r.Hdr.Err == jute.OK {
			t.Errorf("request after closeSession succeeded: %+v", r.Hdr)
		}
	}
	mustNotExist(t, gz, root+"/before")
	mustNotExist(t, gz, root+"/after")
	// Give any straggler time to land, then look again.
	time.Sleep(quiet)
	if ch, _, err := gz.Children(root); err != nil || len(ch) != 0 {
		t.Errorf("children after the closed session: %v %v", ch, err)
	}
}

// TestSetWatchesBatches re-arms thousands of watches on reconnect, which
// go-zookeeper splits into several SetWatches packets of at most 128 KB.
func TestSetWatchesBatches(t *testing.T) {
	t.Parallel()
	a := connect(t, shared, sessionTimeout)
	m := connect(t, shared, sessionTimeout)
	root := testRoot(t, m)
	const n = 3000
	pad := strings.Repeat("p", 80)
	paths := make([]string, n)
	var ops []interface{}
	for i := range paths {
		paths[i] = fmt.Sprintf("%s/%s-%04d", root, pad, i)
		ops = append(ops, &zk.CreateRequest{Path: paths[i], Acl: openACL})
		if len(ops) == 1000 {
			if _, err := m.Multi(ops...); err != nil {
				t.Fatal(err)
			}
			ops = nil
		}
	}
	chans := make([]<-chan zk.Event, n)
	for i, p := range paths {
		_, _, ch, err := a.GetW(p)
		if err != nil {
			t.Fatal(err)
		}
		chans[i] = ch
	}
	a.dialer.drop(true /* block */)
	a.waitState(t, zk.StateDisconnected, 5*time.Second)
	changed := map[int]bool{}
	for i := 0; i < n; i += 97 {
		if _, err := m.Set(paths[i], []byte("x"), -1); err != nil {
			t.Fatal(err)
		}
		changed[i] = true
	}
	a.dialer.unblock()
	a.waitState(t, zk.StateHasSession, 10*time.Second)
	for i := range changed {
		waitEvent(t, chans[i], zk.EventNodeDataChanged, paths[i])
	}
	// The others were re-armed: a change fires each of a sample.
	for i := 1; i < n; i += 211 {
		if changed[i] {
			continue
		}
		if _, err := m.Set(paths[i], []byte("y"), -1); err != nil {
			t.Fatal(err)
		}
		waitEvent(t, chans[i], zk.EventNodeDataChanged, paths[i])
	}
}

// TestSessionTimeoutBounds: explicit minimum and maximum session timeouts
// (zkraft --min-session-timeout/--max-session-timeout in ms, ZooKeeper's
// minSessionTimeout/maxSessionTimeout) replace the tick-based defaults.
func TestSessionTimeoutBounds(t *testing.T) {
	t.Parallel()
	opts := ServerOptions{
		ZooCfg:    []string{"minSessionTimeout=6000", "maxSessionTimeout=9000"},
		ExtraArgs: []string{"--min-session-timeout", "6000", "--max-session-timeout", "9000"},
	}
	if target == targetZookeeper {
		opts.ExtraArgs = nil
	} else {
		opts.ZooCfg = nil
	}
	srv := StartServer(t, opts)
	for _, tc := range []struct{ ask, want int32 }{{4000, 6000}, {7000, 7000}, {30000, 9000}} {
		c := newRawSession(t, srv, tc.ask)
		if c.Timeout != tc.want {
			t.Errorf("asked %d ms: negotiated %d, want %d", tc.ask, c.Timeout, tc.want)
		}
		c.closeSession()
	}
}
