package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/zkraft/zkraft/acl"
	"github.com/zkraft/zkraft/internal/testing/rawclient"
	"github.com/zkraft/zkraft/jute"
)

func TestHandshakeMirrorsReadOnlyByte(t *testing.T) {
	ts := startServer(t)
	for _, ro := range []bool{false, true} {
		c := rawclient.Dial(t, ts.addr)
		c.Send(&jute.ConnectRequest{TimeOut: 3000, Passwd: make([]byte, 16), HasReadOnly: ro})
		frame := c.Frame()
		want := 4 + 4 + 8 + 4 + 16
		if ro {
			want++
		}
		if len(frame) != want {
			t.Fatalf("readOnly byte sent=%v: response is %d bytes, want %d", ro, len(frame), want)
		}
		var resp jute.ConnectResponse
		if err := jute.Unmarshal(frame, &resp); err != nil {
			t.Fatal(err)
		}
		if resp.SessionID == 0 || len(resp.Passwd) != 16 || resp.TimeOut != 3000 {
			t.Fatalf("bad response %+v", resp)
		}
	}
}

func TestSessionTimeoutNegotiated(t *testing.T) {
	ts := startServer(t) // tick 200ms: bounds 400..4000
	for _, tc := range []struct{ ask, want int32 }{{10, 400}, {1000, 1000}, {60000, 4000}} {
		c := rawclient.Dial(t, ts.addr)
		c.Send(&jute.ConnectRequest{TimeOut: tc.ask, Passwd: make([]byte, 16)})
		var resp jute.ConnectResponse
		if err := jute.Unmarshal(c.Frame(), &resp); err != nil {
			t.Fatal(err)
		}
		if resp.TimeOut != tc.want {
			t.Errorf("asked %d: got %d, want %d", tc.ask, resp.TimeOut, tc.want)
		}
	}
}

func TestPasswordsAreRandom(t *testing.T) {
	ts := startServer(t)
	a := rawclient.Dial(t, ts.addr).Connect(false)
	b := rawclient.Dial(t, ts.addr).Connect(false)
	if bytes.Equal(a.Passwd, b.Passwd) || bytes.Equal(a.Passwd, make([]byte, 16)) {
		t.Fatalf("passwords not random: %x %x", a.Passwd, b.Passwd)
	}
}

func TestPingRepliesWithLastZxid(t *testing.T) {
	ts := startServer(t)
	c := rawclient.Dial(t, ts.addr)
	c.Connect(false)
	c.Request(jute.XidPing, jute.OpPing, nil)
	h := c.Reply(nil)
	if h.Xid != jute.XidPing || h.Err != jute.OK || h.Zxid != ts.node.LastZxid() {
		t.Fatalf("ping reply %+v, last zxid %d", h, ts.node.LastZxid())
	}
}

// TestPipelinedRepliesInOrder sends many writes and reads without waiting
// and checks every reply comes back in request order, with each read seeing
// exactly the writes before it.
func TestPipelinedRepliesInOrder(t *testing.T) {
	ts := startServer(t)
	c := rawclient.Dial(t, ts.addr)
	c.Connect(false)
	c.Request(1, jute.OpCreate, &jute.CreateRequest{Path: "/p", Data: []byte("0"), ACL: openACL})
	const n = 200
	for i := 0; i < n; i++ {
		c.Request(int32(2+2*i), jute.OpSetData, &jute.SetDataRequest{Path: "/p", Data: []byte(fmt.Sprint(i + 1)), Version: -1})
		c.Request(int32(3+2*i), jute.OpGetData, &jute.PathWatchRequest{Path: "/p"})
	}
	if h := c.Reply(nil); h.Xid != 1 || h.Err != jute.OK {
		t.Fatalf("create reply %+v", h)
	}
	for i := 0; i < n; i++ {
		var set jute.StatResponse
		if h := c.Reply(&set); h.Xid != int32(2+2*i) || h.Err != jute.OK {
			t.Fatalf("reply %d: %+v", 2+2*i, h)
		}
		var get jute.GetDataResponse
		h := c.Reply(&get)
		if h.Xid != int32(3+2*i) || h.Err != jute.OK {
			t.Fatalf("reply %d: %+v", 3+2*i, h)
		}
		if string(get.Data) != fmt.Sprint(i+1) || get.Stat.Version != int32(i+1) {
			t.Fatalf("read %d saw data %q version %d", i, get.Data, get.Stat.Version)
		}
		if get.Stat.Mzxid != set.Stat.Mzxid {
			t.Fatalf("read %d saw mzxid %d, its preceding write made %d", i, get.Stat.Mzxid, set.Stat.Mzxid)
		}
	}
}

func TestLinearizableReadsKeepOrder(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.LinearizableReads = true })
	c := rawclient.Dial(t, ts.addr)
	c.Connect(false)
	c.Request(1, jute.OpCreate, &jute.CreateRequest{Path: "/l", Data: []byte("0"), ACL: openACL})
	c.Request(2, jute.OpGetData, &jute.PathWatchRequest{Path: "/l"})
	c.Request(3, jute.OpSetData, &jute.SetDataRequest{Path: "/l", Data: []byte("1"), Version: -1})
	c.Request(4, jute.OpGetData, &jute.PathWatchRequest{Path: "/l"})
	c.Request(jute.XidPing, jute.OpPing, nil)
	want := []struct {
		xid  int32
		data string
	}{{1, ""}, {2, "0"}, {3, ""}, {4, "1"}, {jute.XidPing, ""}}
	for _, w := range want {
		var get jute.GetDataResponse
		var body jute.Record
		if w.data != "" {
			body = &get
		}
		h := c.Reply(body)
		if h.Xid != w.xid || h.Err != jute.OK || string(get.Data) != w.data {
			t.Fatalf("reply %+v data %q, want xid %d data %q", h, get.Data, w.xid, w.data)
		}
	}
}

// TestWatchEventPrecedesLaterReply: a notification reaches the client
// before the reply to any request that sees the change.
func TestWatchEventPrecedesLaterReply(t *testing.T) {
	ts := startServer(t)
	a := rawclient.Dial(t, ts.addr)
	a.Connect(false)
	b := rawclient.Dial(t, ts.addr)
	b.Connect(false)
	a.Request(1, jute.OpCreate, &jute.CreateRequest{Path: "/w", ACL: openACL})
	a.Reply(nil)
	a.Request(2, jute.OpGetData, &jute.PathWatchRequest{Path: "/w", Watch: true})
	a.Reply(nil)
	b.Request(1, jute.OpSetData, &jute.SetDataRequest{Path: "/w", Data: []byte("x"), Version: -1})
	b.Reply(nil)
	a.Request(3, jute.OpGetData, &jute.PathWatchRequest{Path: "/w"})
	var ev jute.WatcherEvent
	h := a.Reply(nil)
	if h.Xid != jute.XidNotification {
		t.Fatalf("expected the notification first, got xid %d", h.Xid)
	}
	_ = ev
	if h := a.Reply(nil); h.Xid != 3 {
		t.Fatalf("then the reply, got xid %d", h.Xid)
	}
}

func TestUnknownOpcodeUnimplementedThenClosed(t *testing.T) {
	ts := startServer(t)
	for _, op := range []jute.Op{10, 99, jute.OpCheck, jute.OpCreateSession, 1000} { // deleteContainer: TestRefusedOpcodesKeepConnection (e2e)
		c := rawclient.Dial(t, ts.addr)
		c.Connect(false)
		c.Request(7, op, &jute.PathVersionRequest{Path: "/", Version: -1})
		h := c.Reply(nil)
		if h.Xid != 7 || h.Err != jute.ErrUnimplemented {
			t.Fatalf("op %d: reply %+v, want -6", op, h)
		}
		c.ExpectClosed()
	}
}

func TestOversizeFrameClosesConnection(t *testing.T) {
	ts := startServer(t)
	c := rawclient.Dial(t, ts.addr)
	c.Connect(false)
	c.SendRaw(be32(jute.DefaultMaxBuffer + 1))
	c.ExpectClosed()

	pre := rawclient.Dial(t, ts.addr) // before the handshake too
	pre.SendRaw(be32(0x7fffffff))
	pre.ExpectClosed()
}

// TestMalformedBodyMarshallingError: a request whose header is fine but
// whose body does not decode gets -5 and the connection stays usable, as on
// ZooKeeper; a frame too short for a header closes the connection.
func TestMalformedBodyMarshallingError(t *testing.T) {
	ts := startServer(t)
	c := rawclient.Dial(t, ts.addr)
	c.Connect(false)
	for i, op := range []jute.Op{jute.OpGetData, jute.OpCreate, jute.OpSetData, jute.OpMulti, jute.OpSync, jute.OpSetWatches} {
		c.SendRaw(append(be32(12), append(append(be32(int32(i+1)), be32(int32(op))...), be32(9)...)...))
		if h := c.Reply(nil); h.Xid != int32(i+1) || h.Err != jute.ErrMarshallingError {
			t.Fatalf("op %d: %+v, want -5", op, h)
		}
	}
	c.Request(jute.XidPing, jute.OpPing, nil)
	if h := c.Reply(nil); h.Xid != jute.XidPing {
		t.Fatalf("connection not usable after -5: %+v", h)
	}
	c.SendRaw(append(be32(3), 1, 2, 3))
	c.ExpectClosed()
}

func TestGarbageClosesOnlyThatConnection(t *testing.T) {
	ts := startServer(t)
	good := rawclient.Dial(t, ts.addr)
	good.Connect(false)
	bad := rawclient.Dial(t, ts.addr)
	bad.Connect(false)
	// A create whose ACL vector claims a million entries: -5, no allocation.
	bad.SendRaw(append(be32(20), append(append(be32(1), be32(int32(jute.OpCreate))...), append(be32(1), 'x', 0, 0, 0)...)...))
	bad.SendRaw(be32(1000000))
	if h := bad.Reply(nil); h.Err != jute.ErrMarshallingError {
		t.Fatalf("bad create: %+v", h)
	}
	bad.SendRaw(be32(-5)) // a negative frame length: closed
	bad.ExpectClosed()
	good.Request(1, jute.OpExists, &jute.PathWatchRequest{Path: "/"})
	if h := good.Reply(nil); h.Err != jute.OK {
		t.Fatalf("other session harmed: %+v", h)
	}
}

func TestLastZxidAheadOfServerRefused(t *testing.T) {
	ts := startServer(t)
	c := rawclient.Dial(t, ts.addr)
	c.Send(&jute.ConnectRequest{LastZxidSeen: ts.node.LastZxid() + 1000, TimeOut: 3000, Passwd: make([]byte, 16)})
	c.ExpectClosed()
}

func TestResumeAndWrongPassword(t *testing.T) {
	ts := startServer(t)
	first := rawclient.Dial(t, ts.addr)
	resp := first.Connect(false)

	again := rawclient.Dial(t, ts.addr)
	again.Send(&jute.ConnectRequest{TimeOut: 3000, SessionID: resp.SessionID, Passwd: resp.Passwd})
	var r2 jute.ConnectResponse
	if err := jute.Unmarshal(again.Frame(), &r2); err != nil {
		t.Fatal(err)
	}
	if r2.SessionID != resp.SessionID || !bytes.Equal(r2.Passwd, resp.Passwd) {
		t.Fatalf("resume: %+v", r2)
	}
	first.ExpectClosed() // the stale connection is dropped

	wrong := rawclient.Dial(t, ts.addr)
	bad := append([]byte(nil), resp.Passwd...)
	bad[0] ^= 1
	wrong.Send(&jute.ConnectRequest{TimeOut: 3000, SessionID: resp.SessionID, Passwd: bad})
	var r3 jute.ConnectResponse
	if err := jute.Unmarshal(wrong.Frame(), &r3); err != nil {
		t.Fatal(err)
	}
	if r3.TimeOut != 0 || r3.SessionID != 0 || !bytes.Equal(r3.Passwd, make([]byte, 16)) {
		t.Fatalf("wrong password must look expired: %+v", r3)
	}
	wrong.ExpectClosed()
}

var openACL = []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}

func TestReconfigGate(t *testing.T) {
	for _, tc := range []struct {
		enabled bool
		want    jute.ErrCode
	}{{false, jute.ErrReconfigDisabled}, {true, jute.ErrUnimplemented}} {
		ts := startServer(t, func(c *Config) { c.ReconfigEnabled = tc.enabled })
		c := rawclient.Dial(t, ts.addr)
		c.Connect(false)
		c.Request(5, jute.OpReconfig, &jute.ReconfigRequest{LeavingServers: "2", CurConfigID: -1})
		c.Request(6, jute.OpExists, &jute.PathWatchRequest{Path: "/"})
		if h := c.Reply(nil); h.Xid != 5 || h.Err != tc.want {
			t.Fatalf("reconfigEnabled=%v: %+v, want %v", tc.enabled, h, tc.want)
		}
		if h := c.Reply(nil); h.Xid != 6 || h.Err != jute.OK {
			t.Fatalf("connection must stay usable: %+v", h)
		}
	}
}

// TestStalledClientDoesNotDelayOthers: a client that floods requests and
// never reads its socket cannot hold up the FSM or other sessions. Its
// reader pauses once a few of its 500 KB replies are queued, so the member
// serialises only those (on a 2-core CI machine under -race, serialising
// them until 64 MiB were queued delayed another client's writes by
// seconds); the bound on its backlog is checked as well as the other
// client's latency. The other client writes nodes of its own, so the
// stalled client's replies stay large throughout (it used to shrink /big
// to one byte with its first write, which left the test to chance).
func TestStalledClientDoesNotDelayOthers(t *testing.T) {
	ts := startServer(t)
	stalled := rawclient.Dial(t, ts.addr)
	stalled.Connect(false)
	stalled.Request(1, jute.OpCreate, &jute.CreateRequest{Path: "/big", Data: make([]byte, 500000), ACL: openACL})
	other := rawclient.Dial(t, ts.addr)
	other.Connect(false)
	// Once the create is applied the flood's reads are answered as they
	// are read, not parked behind it (maxParkedReads bounds that burst).
	for xid := int32(100); ; xid++ {
		other.Request(xid, jute.OpExists, &jute.PathWatchRequest{Path: "/big"})
		if h := other.Reply(nil); h.Err == jute.OK {
			break
		}
		time.Sleep(time.Millisecond)
	}
	done := make(chan struct{})
	go func() { // keep asking for 500 KB and never read a reply
		defer close(done)
		floodGetData(stalled, "/big", true, 400, 2, 2*time.Second)
	}()
	var peak int64
	for i := 0; i < 50; i++ {
		start := time.Now()
		// Writes to a node of its own: /big keeps its 500 KB, so every
		// reply to the stalled client stays large.
		other.Request(int32(i+1), jute.OpCreate, &jute.CreateRequest{Path: fmt.Sprintf("/other%d", i), ACL: openACL})
		if h := other.Reply(nil); h.Err != jute.OK {
			t.Fatalf("write %d: %+v", i, h)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Fatalf("write %d took %v behind a stalled client", i, d)
		}
		peak = max(peak, queuedBytes(ts.srv))
	}
	<-done
	for deadline := time.Now().Add(10 * time.Second); ts.srv.backlog.stalls.Load() == 0; {
		if time.Now().After(deadline) {
			t.Fatalf("the stalled client's reader never paused (queued %d, received %d, sent %d)", queuedBytes(ts.srv), ts.srv.stats.packetsReceived.Load(), ts.srv.stats.packetsSent.Load())
		}
		peak = max(peak, queuedBytes(ts.srv))
		time.Sleep(time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	peak = max(peak, queuedBytes(ts.srv))
	if limit := int64(MaxUnsentPerConn + 2<<20); peak > limit {
		t.Fatalf("%d KiB queued for a client that does not read, want at most %d KiB", peak>>10, limit>>10)
	}
}

// TestWhoAmIOrderIsZooKeepers: ZooKeeper lists identities in its hash set's
// order; after "addauth digest bob:..." zkCli shows digest before ip.
func TestWhoAmIOrderIsZooKeepers(t *testing.T) {
	ids := acl.IdentityOrder([]jute.Id{{Scheme: "ip", ID: "127.0.0.1"}, {Scheme: "digest", ID: digestID("bob:secret")}})
	if ids[0].Scheme != "digest" || ids[1].Scheme != "ip" {
		t.Fatalf("order %v, want digest then ip as ZooKeeper 3.8 prints it", ids)
	}
	if h := acl.JavaStringHash("hello"); h != 99162322 {
		t.Fatalf("String.hashCode(hello) = %d", h)
	}
}

func TestEphemeralsInJavaHashSetOrder(t *testing.T) {
	// ZooKeeper 3.8 answered getEphemerals with [/t_session/e2, /t_session/e1].
	got := javaClonedSetOrder([]string{"/t_session/e1", "/t_session/e2"}, 2)
	if got[0] != "/t_session/e2" || got[1] != "/t_session/e1" {
		t.Fatalf("%v", got)
	}
}

// TestWatchControlOnMalformedPath: ZooKeeper does not validate the path of
// checkWatches/removeWatches; a malformed one has no watch (-121).
func TestWatchControlOnMalformedPath(t *testing.T) {
	ts := startServer(t)
	c := rawclient.Dial(t, ts.addr)
	c.Connect(false)
	for i, p := range []string{"", "/a/", "/a/./x"} {
		c.Request(int32(i+1), jute.OpRemoveWatches, &jute.PathTypeRequest{Path: p, Type: jute.WatcherAny})
		if h := c.Reply(nil); h.Err != jute.ErrNoWatcher {
			t.Fatalf("removeWatches %q: %+v, want -121", p, h)
		}
	}
}

// TestClientThatNeverReadsIsCutOff: a client that keeps asking for
// replies and never reads them is disconnected once a write to it has
// blocked for the write timeout, and a client that reads its replies is
// still served.
func TestClientThatNeverReadsIsCutOff(t *testing.T) {
	// The write timeout applies to the reading client too: 200 ms was
	// less than its writer may wait for a core under the race pass beside
	// a make test, and its connection was cut off with the stalled one.
	ts := startServer(t, func(c *Config) { c.WriteTimeout = time.Second })
	setup := rawclient.Dial(t, ts.addr)
	setup.Connect(false)
	setup.Request(1, jute.OpCreate, &jute.CreateRequest{Path: "/mid", Data: make([]byte, 32<<10), ACL: openACL})
	if h := setup.Reply(nil); h.Err != jute.OK {
		t.Fatalf("create: %+v", h)
	}

	// The reading client pings as a client does, a third of its 3 s
	// session timeout apart, while the other one stalls: that takes
	// seconds, longer than the session on a loaded machine, where a
	// silent client's session expired and its getData below failed.
	stopPings := keepAlive(setup, time.Second)

	stalled := rawclient.Dial(t, ts.addr)
	stalled.Connect(false)
	// Ask for 64 MB of replies, then wait well past the write timeout.
	floodGetData(stalled, "/mid", false, 2000, 1, time.Second)
	time.Sleep(2500 * time.Millisecond)
	_ = stalled.Conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	// EOF, or a reset (the server closed with requests unread), ends the
	// copy; only a timeout means the connection is still open.
	if _, err := io.Copy(io.Discard, stalled.Conn); errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the stalled connection was not closed by the server: %v", err)
	}

	// The setup client, which reads, was answered all along and still is.
	if n, err := stopPings(); err != nil {
		t.Fatalf("the reading client's ping %d: %v", n, err)
	}
	setup.Request(2, jute.OpGetData, &jute.PathWatchRequest{Path: "/mid"})
	if h := setup.Reply(nil); h.Err != jute.OK {
		t.Fatalf("getData on a reading client: %+v", h)
	}
}

// keepAlive pings the server through c every interval, reading each
// reply, until stop is called; stop returns how many pings were answered
// and the error that ended them, if one did. Meanwhile only keepAlive
// uses c.
func keepAlive(c *rawclient.Client, interval time.Duration) (stop func() (int, error)) {
	done := make(chan struct{})
	result := make(chan error, 1)
	answered := 0
	go func() {
		var w jute.Writer
		at := jute.BeginFrame(&w)
		(&jute.RequestHeader{Xid: jute.XidPing, Type: jute.OpPing}).Encode(&w)
		jute.EndFrame(&w, at)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				result <- nil
				return
			case <-tick.C:
			}
			_ = c.Conn.SetDeadline(time.Now().Add(5 * time.Second))
			if _, err := c.Conn.Write(w.Buf); err != nil {
				result <- err
				return
			}
			b, err := jute.ReadFrame(c.Reader, nil, 1<<24)
			if err != nil {
				result <- err
				return
			}
			var h jute.ReplyHeader
			if err := h.Decode(jute.NewReader(b)); err != nil || h.Xid != jute.XidPing || h.Err != jute.OK {
				result <- fmt.Errorf("reply %+v (%v), want the ping's", h, err)
				return
			}
			answered++
		}
	}()
	return func() (int, error) {
		close(done)
		err := <-result
		_ = c.Conn.SetDeadline(time.Time{})
		return answered, err
	}
}

// floodGetData sends n getData requests for path (xids from firstXid), one
// frame per write, reading nothing; it stops early once a write has been
// blocked for perWrite (the server stopped reading, or is gone).
func floodGetData(c *rawclient.Client, path string, watch bool, n int, firstXid int32, perWrite time.Duration) {
	var w jute.Writer
	for i := 0; i < n; i++ {
		w.Reset()
		at := jute.BeginFrame(&w)
		h := jute.RequestHeader{Xid: firstXid + int32(i), Type: jute.OpGetData}
		h.Encode(&w)
		(&jute.PathWatchRequest{Path: path, Watch: watch}).Encode(&w)
		jute.EndFrame(&w, at)
		_ = c.Conn.SetWriteDeadline(time.Now().Add(perWrite))
		if _, err := c.Conn.Write(w.Buf); err != nil {
			return
		}
	}
}
