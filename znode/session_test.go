package znode

import (
	"testing"

	"github.com/zkraft/zkraft/jute"
)

func TestSessions(t *testing.T) {
	h := newHarness(t, Options{})
	r := h.apply(&Txn{Type: jute.OpCreateSession, Session: testSession, Timeout: 1})
	if r.Err != jute.ErrNodeExists {
		t.Fatalf("duplicate createSession: %v", r.Err)
	}
	h.apply(&Txn{Type: jute.OpCreateSession, Session: 2, Timeout: 4000, Passwd: []byte("pw")})
	if s, ok := h.tree.Session(2); !ok || s.Timeout != 4000 || string(s.Passwd) != "pw" {
		t.Fatalf("session 2: %+v %v", s, ok)
	}
	if got := h.tree.Sessions(); len(got) != 2 || got[0].ID != 2 || got[1].ID != testSession {
		t.Fatalf("sessions %+v", got)
	}

	h.mustCreate("/a", nil, 0)
	h.mustCreate("/a/e2", nil, 1)
	h.mustCreate("/e1", nil, 1)
	h.mustCreate("/a/e1", nil, 1)
	h.sess = 2
	h.mustCreate("/other", nil, 1)

	for _, c := range []struct {
		prefix string
		want   []string
	}{
		{"", []string{"/a/e1", "/a/e2", "/e1"}},
		{" / ", []string{"/a/e1", "/a/e2", "/e1"}},
		{"/a", []string{"/a/e1", "/a/e2"}},
		{"/e", []string{"/e1"}},
		{"/zz", []string{}},
	} {
		got := h.tree.GetEphemerals(testSession, c.prefix)
		if len(got) != len(c.want) {
			t.Errorf("prefix %q: %v", c.prefix, got)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("prefix %q: %v", c.prefix, got)
			}
		}
	}

	r = h.apply(&Txn{Type: jute.OpCloseSession, Session: testSession})
	if r.Err != jute.OK || r.Resp != nil {
		t.Fatalf("close: %+v", r)
	}
	want := []Event{
		{Path: "/a/e1", Type: jute.EventNodeDeleted}, {Path: "/a", Type: jute.EventNodeChildrenChanged},
		{Path: "/a/e2", Type: jute.EventNodeDeleted}, {Path: "/a", Type: jute.EventNodeChildrenChanged},
		{Path: "/e1", Type: jute.EventNodeDeleted}, {Path: "/", Type: jute.EventNodeChildrenChanged},
	}
	if len(r.Events) != len(want) {
		t.Fatalf("events %+v", r.Events)
	}
	for i := range want {
		if r.Events[i].Path != want[i].Path || r.Events[i].Type != want[i].Type {
			t.Errorf("event %d: %+v want %+v", i, r.Events[i], want[i])
		}
	}
	if _, ok := h.tree.Session(testSession); ok {
		t.Fatal("session survived close")
	}
	if st := h.stat("/a"); st.Pzxid != r.Zxid || st.NumChildren != 0 || st.Cversion != 4 {
		t.Fatalf("/a %+v", st)
	}
	if s := h.tree.Stats(); s.Ephemerals != 1 || s.Sessions != 1 {
		t.Fatalf("stats %+v", s)
	}
	// Closing an unknown session is a no-op; writes of it are expired.
	if r := h.apply(&Txn{Type: jute.OpCloseSession, Session: testSession}); r.Err != jute.OK || len(r.Events) != 0 {
		t.Fatalf("close unknown: %+v", r)
	}
	h.sess = testSession
	if r := h.create("/x", nil, 0); r.Err != jute.ErrSessionExpired {
		t.Fatalf("write after close: %v", r.Err)
	}
}

func TestTxnCodec(t *testing.T) {
	in := &Txn{Type: jute.OpCreate2, Session: -5, Time: 77, Ids: []jute.Id{{Scheme: "ip", ID: "::1"}, {Scheme: "super"}},
		Timeout: 9, Passwd: []byte{1, 2}, Req: []byte{}}
	var w jute.Writer
	in.Encode(&w)
	out, err := DecodeTxn(w.Buf)
	if err != nil {
		t.Fatal(err)
	}
	if out.Type != in.Type || out.Session != in.Session || out.Time != in.Time || len(out.Ids) != 2 ||
		out.Ids[1] != in.Ids[1] || out.Timeout != 9 || string(out.Passwd) != "\x01\x02" || out.Req == nil {
		t.Fatalf("%+v", out)
	}
	for i := 0; i < len(w.Buf); i++ {
		if _, err := DecodeTxn(w.Buf[:i]); err == nil {
			t.Fatalf("truncated at %d decoded", i)
		}
	}
	if _, err := DecodeTxn(append(w.Buf, 0)); err == nil {
		t.Fatal("trailing byte accepted")
	}
}

func TestMalformedAndUnknown(t *testing.T) {
	h := newHarness(t, Options{})
	for _, op := range []jute.Op{jute.OpCreate, jute.OpDelete, jute.OpSetData, jute.OpSetACL, jute.OpMulti, jute.OpDeleteContainer} {
		if r := h.apply(&Txn{Type: op, Session: testSession, Req: []byte{0, 0, 0, 9, 'x'}}); r.Err != jute.ErrMarshallingError {
			t.Errorf("op %d: %v", op, r.Err)
		}
	}
	for _, op := range []jute.Op{jute.OpCheck, jute.OpGetData, 99} {
		if r := h.apply(&Txn{Type: op, Session: testSession}); r.Err != jute.ErrUnimplemented {
			t.Errorf("op %d: %v", op, r.Err)
		}
	}
}
