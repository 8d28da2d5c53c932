package e2e

import (
	"encoding/binary"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkraft/zkraft/jute"
)

// shortFrame is a frame of n zero bytes.
func shortFrame(n int) []byte {
	b := make([]byte, 4+n)
	binary.BigEndian.PutUint32(b, uint32(n))
	return b
}

// TestHandshakeReadOnlyByte checks that the ConnectResponse carries the
// trailing readOnly byte exactly when the ConnectRequest did.
func TestHandshakeReadOnlyByte(t *testing.T) {
	t.Parallel()
	for _, withByte := range []bool{true, false} {
		c := dialRaw(t, shared)
		resp, body, err := c.tryHandshake(&jute.ConnectRequest{TimeOut: 5000, Passwd: make([]byte, 16), HasReadOnly: withByte})
		if err != nil {
			t.Fatalf("readOnly byte %v: %v", withByte, err)
		}
		// protocolVersion 4 + timeOut 4 + sessionId 8 + passwd 4+16 (+ readOnly 1)
		want := 36
		if withByte {
			want = 37
		}
		if len(body) != want || resp.HasReadOnly != withByte || resp.ReadOnly {
			t.Errorf("readOnly byte %v: reply %d bytes %x, want %d", withByte, len(body), body, want)
		}
		if resp.ProtocolVersion != 0 || resp.TimeOut != 5000 || resp.SessionID == 0 || len(resp.Passwd) != 16 {
			t.Errorf("readOnly byte %v: reply %+v", withByte, resp)
		}
		// The session works either way.
		c.ping()
		c.closeSession()
	}
}

// TestHandshakeRefusals: a handshake frame too short to decode, and a client
// that has seen a zxid the server has not, both get the connection closed
// with no reply.
func TestHandshakeRefusals(t *testing.T) {
	t.Parallel()
	c := dialRaw(t, shared)
	if err := c.writeRaw(shortFrame(5)); err != nil {
		t.Fatal(err)
	}
	if got := c.expectClosed(); len(got) != 0 {
		t.Errorf("short handshake: %d replies before close", len(got))
	}
	c = dialRaw(t, shared)
	req := &jute.ConnectRequest{LastZxidSeen: 1 << 50, TimeOut: 5000, Passwd: make([]byte, 16), HasReadOnly: true}
	if err := c.writeRaw(frame(jute.Marshal(req))); err != nil {
		t.Fatal(err)
	}
	if got := c.expectClosed(); len(got) != 0 {
		t.Errorf("zxid ahead: %d replies before close", len(got))
	}
}

// TestPing checks the ping reply: xid -2, err 0, no body, and the server's
// last zxid, in order with other replies.
func TestPing(t *testing.T) {
	t.Parallel()
	gz := connect(t, shared, sessionTimeout)
	root := testRoot(t, gz)
	c := newRawSession(t, shared, 5000)
	h := c.call(jute.OpCreate, create(root+"/x"), nil)
	if z := c.ping(); z < h.Zxid {
		t.Errorf("ping zxid %#x < last write %#x", z, h.Zxid)
	}
	// Pings interleaved with requests keep their place.
	var w jute.Writer
	w.Raw(encodeRequest(jute.XidPing, jute.OpPing, nil))
	w.Raw(encodeRequest(100, jute.OpExists, &jute.PathWatchRequest{Path: root}))
	w.Raw(encodeRequest(jute.XidPing, jute.OpPing, nil))
	w.Raw(encodeRequest(101, jute.OpSetData, set(root+"/x", "y")))
	w.Raw(encodeRequest(jute.XidPing, jute.OpPing, nil))
	if err := c.writeRaw(w.Buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []int32{jute.XidPing, 100, jute.XidPing, 101, jute.XidPing} {
		if r := c.recv(); r.Hdr.Xid != want || r.Hdr.Err != jute.OK {
			t.Fatalf("reply %+v, want xid %d", r.Hdr, want)
		}
	}
}

// TestPipelined writes many requests in one burst: the replies come back
// in request order with the right codes and bodies.
func TestPipelined(t *testing.T) {
	t.Parallel()
	gz := connect(t, shared, sessionTimeout)
	root := testRoot(t, gz)
	c := newRawSession(t, shared, 5000)

	type step struct {
		op   jute.Op
		req  jute.Record
		want jute.ErrCode
	}
	var steps []step
	for i := 0; i < 40; i++ {
		p := fmt.Sprintf("%s/n%d", root, i)
		steps = append(steps,
			step{jute.OpCreate, create(p), jute.OK},
			step{jute.OpGetData, &jute.PathWatchRequest{Path: p}, jute.OK},
			step{jute.OpCreate, create(p), jute.ErrNodeExists},
			step{jute.OpSetData, set(p, fmt.Sprint(i)), jute.OK},
			step{jute.OpExists, &jute.PathWatchRequest{Path: p + "/missing"}, jute.ErrNoNode},
			step{jute.OpGetChildren2, &jute.PathWatchRequest{Path: root}, jute.OK},
		)
		if i%2 == 0 {
			steps = append(steps, step{jute.OpDelete, del(p), jute.OK})
		}
	}
	var w jute.Writer
	first := c.xid + 1
	for _, s := range steps {
		w.Raw(encodeRequest(c.nextXid(), s.op, s.req))
	}
	if err := c.writeRaw(w.Buf); err != nil {
		t.Fatal(err)
	}
	var lastZxid int64
	live := 0 // children of root after the writes answered so far
	for i, s := range steps {
		r := c.recv()
		if r.Hdr.Xid != first+int32(i) || r.Hdr.Err != s.want {
			t.Fatalf("reply %d: %+v, want xid %d err %d", i, r.Hdr, first+int32(i), s.want)
		}
		if r.Hdr.Zxid < lastZxid {
			t.Errorf("reply %d: zxid went back from %#x to %#x", i, lastZxid, r.Hdr.Zxid)
		}
		lastZxid = r.Hdr.Zxid
		switch {
		case s.op == jute.OpCreate && s.want == jute.OK:
			live++
		case s.op == jute.OpDelete:
			live--
		case s.op == jute.OpGetChildren2:
			// Reads see every earlier write of the same session.
			var gc jute.GetChildren2Response
			if err := jute.Unmarshal(r.Body, &gc); err != nil {
				t.Fatal(err)
			}
			if len(gc.Children) != live || gc.Stat.NumChildren != int32(live) {
				t.Fatalf("reply %d: %d children (stat %d), want %d", i, len(gc.Children), gc.Stat.NumChildren, live)
			}
		}
	}
	children, _, err := gz.Children(root)
	if err != nil || len(children) != 20 {
		t.Errorf("children after pipeline = %d, %v", len(children), err)
	}
}

// TestUnknownOpcode: err Unimplemented, then the connection is closed; the
// session itself stays usable from a new connection.
func TestUnknownOpcode(t *testing.T) {
	t.Parallel()
	gz := connect(t, shared, sessionTimeout)
	root := testRoot(t, gz)
	for _, op := range []jute.Op{10, 23, 99, 999, -3} {
		c := newRawSession(t, shared, 6000)
		h := c.call(jute.OpCreate, &jute.CreateRequest{Path: fmt.Sprintf("%s/e%d", root, op), ACL: rawOpenACL, Flags: jute.FlagEphemeral}, nil)
		if h.Err != jute.OK {
			t.Fatal(h.Err)
		}
		if err := c.writeRaw(encodeRequest(7, op, &jute.PathRequest{Path: "/"})); err != nil {
			t.Fatal(err)
		}
		got := c.expectClosed()
		if len(got) != 1 || got[0].Hdr.Xid != 7 || got[0].Hdr.Err != jute.ErrUnimplemented || len(got[0].Body) != 0 {
			t.Errorf("op %d: replies before close %+v, want one xid 7 err -6", op, got)
		}
		mustStat(t, gz, fmt.Sprintf("%s/e%d", root, op))
		again := dialRaw(t, shared)
		if resp := again.handshake(&jute.ConnectRequest{TimeOut: 6000, SessionID: c.SessionID, Passwd: c.Passwd, HasReadOnly: true}); resp.SessionID != c.SessionID {
			t.Errorf("op %d: session not resumable after the close: %+v", op, resp)
		}
		again.closeSession()
	}
}

// TestRefusedOpcodesKeepConnection: opcodes ZooKeeper refuses or answers
// without closing. deleteContainer from a client is BadArguments (only the
// container reaper deletes containers); SASL on a server without SASL is
// OK with a null token and zxid 0. The connection serves on after both.
func TestRefusedOpcodesKeepConnection(t *testing.T) {
	t.Parallel()
	gz := connect(t, shared, sessionTimeout)
	root := testRoot(t, gz)
	mustCreate(t, gz, root+"/box", nil, zk.FlagContainer)
	c := newRawSession(t, shared, 6000)
	for _, p := range []string{root + "/box", root + "/nope"} {
		if got := c.callErr(jute.OpDeleteContainer, &jute.PathRequest{Path: p}); got != jute.ErrBadArguments {
			t.Errorf("deleteContainer %s: err %d, want %d", p, got, jute.ErrBadArguments)
		}
	}
	mustStat(t, gz, root+"/box")
	xid := c.send(jute.OpSASL, &jute.GetSASLRequest{Token: []byte{}})
	r := c.recv()
	if r.Hdr.Xid != xid || r.Hdr.Err != jute.OK || r.Hdr.Zxid != 0 || fmt.Sprintf("%x", r.Body) != "ffffffff" {
		t.Errorf("sasl: reply %+v body %x, want xid %d err 0 zxid 0 body ffffffff (null token)", r.Hdr, r.Body, xid)
	}
	if got := c.callErr(jute.OpExists, &jute.PathWatchRequest{Path: root}); got != jute.OK {
		t.Fatalf("exists after the refused requests: %d", got)
	}
}

// TestFrameLimits: a length prefix over jute.maxbuffer (1048575) or
// negative closes the connection, before or after the handshake, without
// a reply.
func TestFrameLimits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		handshake bool
		prefix    uint32
	}{
		{"1048576 after handshake", true, jute.DefaultMaxBuffer + 1},
		{"huge after handshake", true, 0x7fffffff},
		{"negative after handshake", true, 0xffffffff},
		{"1048576 as handshake", false, jute.DefaultMaxBuffer + 1},
		{"negative as handshake", false, 0x80000000},
	} {
		var c *rawConn
		if tc.handshake {
			c = newRawSession(t, shared, 5000)
		} else {
			c = dialRaw(t, shared)
		}
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], tc.prefix)
		if err := c.writeRaw(b[:]); err != nil {
			t.Fatal(err)
		}
		if got := c.expectClosed(); len(got) != 0 {
			t.Errorf("%s: %d replies before close", tc.name, len(got))
		}
	}
	// A frame just under the limit is accepted: setData of ~1 MB.
	gz := connect(t, shared, sessionTimeout)
	root := testRoot(t, gz)
	c := newRawSession(t, shared, 5000)
	big := make([]byte, jute.DefaultMaxBuffer-len(root)-200)
	if h := c.call(jute.OpSetData, &jute.SetDataRequest{Path: root, Data: big, Version: -1}, nil); h.Err != jute.OK {
		t.Errorf("setData of %d bytes: err %d", len(big), h.Err)
	}
}

// TestGarbageAfterHandshake: a frame too short to hold a request header
// closes the connection; a truncated body gets MarshallingError and the
// connection stays usable.
func TestGarbageAfterHandshake(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 2, 7} {
		c := newRawSession(t, shared, 5000)
		if err := c.writeRaw(shortFrame(n)); err != nil {
			t.Fatal(err)
		}
		if got := c.expectClosed(); len(got) != 0 {
			t.Errorf("%d-byte frame: %d replies before close", n, len(got))
		}
	}
	c := newRawSession(t, shared, 5000)
	// getData with a path length of 9 and 1 byte of path.
	if err := c.writeRaw(frame([]byte{0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 9, '/'})); err != nil {
		t.Fatal(err)
	}
	if r := c.recv(); r.Hdr.Xid != 1 || r.Hdr.Err != jute.ErrMarshallingError {
		t.Errorf("truncated getData: %+v, want xid 1 err -5", r.Hdr)
	}
	c.ping()
}

// TestOtherSessionsUnaffected abuses several connections while a normal
// client works; the client keeps its session, data and watches.
func TestOtherSessionsUnaffected(t *testing.T) {
	t.Parallel()
	good := connect(t, shared, sessionTimeout)
	root := testRoot(t, good)
	mustCreate(t, good, root+"/e", nil, zk.FlagEphemeral)
	_, _, ch, err := good.GetW(root + "/e")
	if err != nil {
		t.Fatal(err)
	}
	id := good.SessionID()
	for _, b := range [][]byte{
		shortFrame(2),
		{0xff, 0xff, 0xff, 0xff},
		encodeRequest(1, 999, nil),
		{0, 0x10, 0, 0},
	} {
		c := newRawSession(t, shared, 5000)
		if err := c.writeRaw(b); err != nil {
			t.Fatal(err)
		}
		c.expectClosed()
	}
	// A connection that sends half a frame and hangs does not block others.
	hang := dialRaw(t, shared)
	if err := hang.writeRaw([]byte{0, 0, 0, 40, 0, 0}); err != nil {
		t.Fatal(err)
	}
	if _, err := good.Set(root+"/e", []byte("still here"), -1); err != nil {
		t.Fatalf("good client: %v", err)
	}
	waitEvent(t, ch, zk.EventNodeDataChanged, root+"/e")
	if good.SessionID() != id || good.State() != zk.StateHasSession {
		t.Errorf("good client session %#x state %v", good.SessionID(), good.State())
	}
	time.Sleep(quiet)
	if st := mustStat(t, good, root+"/e"); st.EphemeralOwner != id {
		t.Errorf("ephemeral owner %#x", st.EphemeralOwner)
	}
}

// TestOneConnectionConcurrent shares one go-zookeeper connection among many
// goroutines: their requests are pipelined on one socket, and each
// goroutine's read sees its own earlier write.
func TestOneConnectionConcurrent(t *testing.T) {
	t.Parallel()
	c := connect(t, shared, sessionTimeout)
	root := testRoot(t, c)
	const workers, each = 16, 50
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for g := 0; g < workers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			p := fmt.Sprintf("%s/w%d", root, g)
			if _, err := c.Create(p, []byte("0"), 0, openACL); err != nil {
				errs <- err
				return
			}
			for i := 1; i <= each; i++ {
				want := fmt.Sprint(i)
				if _, err := c.Set(p, []byte(want), int32(i-1)); err != nil {
					errs <- fmt.Errorf("set %s v%d: %w", p, i-1, err)
					return
				}
				data, st, err := c.Get(p)
				if err != nil || string(data) != want || st.Version != int32(i) {
					errs <- fmt.Errorf("get %s after set %s: %q v%d %v", p, want, data, st.Version, err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
