package jute

import (
	"bytes"
	"reflect"
	"testing"
)

// rtCase is a record value and a constructor for the empty record it
// decodes into (records such as createTTL need flags set before Decode).
type rtCase struct {
	name  string
	rec   Record
	fresh func() Record
	// prefixOK lists prefix lengths that legitimately decode (the optional
	// trailing readOnly byte of connect records).
	prefixOK []int
}

var (
	testStat = Stat{Czxid: 1, Mzxid: 2, Ctime: 3, Mtime: 4, Version: 5, Cversion: -6, Aversion: 7,
		EphemeralOwner: 0x100000000000001, DataLength: 9, NumChildren: 10, Pzxid: 11}
	testACL = []ACL{
		{Perms: PermAll, ID: Id{Scheme: "world", ID: "anyone"}},
		{Perms: PermRead | PermWrite, ID: Id{Scheme: "digest", ID: "u:pw="}},
	}
)

func rtCases() []rtCase {
	c := func(name string, rec Record, fresh func() Record) rtCase {
		return rtCase{name: name, rec: rec, fresh: fresh}
	}
	return []rtCase{
		c("Id", &Id{Scheme: "ip", ID: "10.0.0.0/8"}, func() Record { return &Id{} }),
		c("ACL", &testACL[1], func() Record { return &ACL{} }),
		c("Stat", &testStat, func() Record { return &Stat{} }),
		c("RequestHeader", &RequestHeader{Xid: -8, Type: OpSetWatches2}, func() Record { return &RequestHeader{} }),
		c("ReplyHeader", &ReplyHeader{Xid: 7, Zxid: 1 << 40, Err: ErrNoNode}, func() Record { return &ReplyHeader{} }),
		{name: "ConnectRequest/readOnly", rec: &ConnectRequest{LastZxidSeen: 9, TimeOut: 30000, SessionID: 5,
			Passwd: make([]byte, 16), ReadOnly: true, HasReadOnly: true},
			fresh: func() Record { return &ConnectRequest{} }, prefixOK: []int{44}},
		c("ConnectRequest/noReadOnly", &ConnectRequest{TimeOut: 30000, Passwd: make([]byte, 16)},
			func() Record { return &ConnectRequest{} }),
		c("ConnectRequest/nullPasswd", &ConnectRequest{TimeOut: 1}, func() Record { return &ConnectRequest{} }),
		{name: "ConnectResponse/readOnly", rec: &ConnectResponse{TimeOut: 4000, SessionID: -1, Passwd: []byte("0123456789abcdef"),
			HasReadOnly: true}, fresh: func() Record { return &ConnectResponse{} }, prefixOK: []int{36}},
		c("ConnectResponse/noReadOnly", &ConnectResponse{Passwd: []byte{}}, func() Record { return &ConnectResponse{} }),
		c("WatcherEvent", &WatcherEvent{Type: EventNodeDeleted, State: StateSyncConnected, Path: "/a/b"},
			func() Record { return &WatcherEvent{} }),
		c("AuthPacket", &AuthPacket{Scheme: "digest", Auth: []byte("u:p")}, func() Record { return &AuthPacket{} }),
		c("ErrorResponse", &ErrorResponse{Err: ErrNoWatcher}, func() Record { return &ErrorResponse{} }),
		c("GetSASLRequest", &GetSASLRequest{Token: []byte{1, 2}}, func() Record { return &GetSASLRequest{} }),
		c("SetSASLResponse/null", &SetSASLResponse{}, func() Record { return &SetSASLResponse{} }),
		c("PathRequest", &PathRequest{Path: "/ü/☃"}, func() Record { return &PathRequest{} }),
		c("PathRequest/empty", &PathRequest{}, func() Record { return &PathRequest{} }),
		c("PathWatchRequest", &PathWatchRequest{Path: "/x", Watch: true}, func() Record { return &PathWatchRequest{} }),
		c("PathVersionRequest", &PathVersionRequest{Path: "/x", Version: -1}, func() Record { return &PathVersionRequest{} }),
		c("PathTypeRequest", &PathTypeRequest{Path: "/x", Type: WatcherAny}, func() Record { return &PathTypeRequest{} }),
		c("StatResponse", &StatResponse{Stat: testStat}, func() Record { return &StatResponse{} }),
		c("CreateRequest", &CreateRequest{Path: "/c", Data: []byte("d"), ACL: testACL, Flags: FlagEphemeralSequential},
			func() Record { return &CreateRequest{} }),
		c("CreateRequest/nullData", &CreateRequest{Path: "/c", ACL: testACL}, func() Record { return &CreateRequest{} }),
		c("CreateRequest/emptyData", &CreateRequest{Path: "/c", Data: []byte{}, ACL: testACL}, func() Record { return &CreateRequest{} }),
		c("CreateRequest/emptyACL", &CreateRequest{Path: "/c", ACL: []ACL{}}, func() Record { return &CreateRequest{} }),
		c("CreateTTLRequest", &CreateRequest{Path: "/t", ACL: testACL, Flags: FlagPersistentTTL, TTL: 1<<40 - 1, HasTTL: true},
			func() Record { return &CreateRequest{HasTTL: true} }),
		c("Create2Response", &Create2Response{Path: "/c0000000001", Stat: testStat}, func() Record { return &Create2Response{} }),
		c("GetDataResponse", &GetDataResponse{Data: bytes.Repeat([]byte{0xff}, 300), Stat: testStat},
			func() Record { return &GetDataResponse{} }),
		c("GetDataResponse/null", &GetDataResponse{Stat: testStat}, func() Record { return &GetDataResponse{} }),
		c("SetDataRequest", &SetDataRequest{Path: "/s", Data: []byte{0}, Version: 3}, func() Record { return &SetDataRequest{} }),
		c("GetACLResponse", &GetACLResponse{ACL: testACL, Stat: testStat}, func() Record { return &GetACLResponse{} }),
		c("SetACLRequest", &SetACLRequest{Path: "/s", ACL: testACL, Version: -1}, func() Record { return &SetACLRequest{} }),
		c("StringsResponse", &StringsResponse{Strings: []string{"a", "", "ccc"}}, func() Record { return &StringsResponse{} }),
		c("StringsResponse/empty", &StringsResponse{Strings: []string{}}, func() Record { return &StringsResponse{} }),
		c("GetChildren2Response", &GetChildren2Response{Children: []string{"x"}, Stat: testStat},
			func() Record { return &GetChildren2Response{} }),
		c("IntResponse", &IntResponse{N: -5}, func() Record { return &IntResponse{} }),
		c("SetWatches", &SetWatches{RelativeZxid: 77, DataWatches: []string{"/d"}, ExistWatches: []string{},
			ChildWatches: []string{"/c1", "/c2"}}, func() Record { return &SetWatches{} }),
		c("SetWatches2", &SetWatches{RelativeZxid: 77, DataWatches: []string{}, ExistWatches: []string{"/e"},
			ChildWatches: []string{}, PersistentWatches: []string{"/p"}, PersistentRecursive: []string{"/r", "/"}, V2: true},
			func() Record { return &SetWatches{V2: true} }),
		c("WhoAmIResponse", &WhoAmIResponse{ClientInfo: []ClientInfo{{"ip", "127.0.0.1"}, {"digest", "u"}}},
			func() Record { return &WhoAmIResponse{} }),
		c("ReconfigRequest", &ReconfigRequest{JoiningServers: "server.2=h:1:2;3", LeavingServers: "3", NewMembers: "",
			CurConfigID: -1}, func() Record { return &ReconfigRequest{} }),
		c("ReconfigRequest/nulls", &ReconfigRequest{JoiningServers: "server.2=h:1:2;3", NullLeaving: true, NullNewMembers: true,
			CurConfigID: 0x100000002}, func() Record { return &ReconfigRequest{} }),
		c("MultiHeader", &MultiHeader{Type: OpCreate2, Err: ErrNodeExists}, func() Record { return &MultiHeader{} }),
		c("MultiRequest", &MultiRequest{Ops: []MultiOp{
			{OpCreate, &CreateRequest{Path: "/m", ACL: testACL}},
			{OpCreate2, &CreateRequest{Path: "/m2", Data: []byte{}, ACL: testACL, Flags: 2}},
			{OpCreateContainer, &CreateRequest{Path: "/mc", ACL: testACL, Flags: FlagContainer}},
			{OpCreateTTL, &CreateRequest{Path: "/mt", ACL: testACL, Flags: FlagPersistentTTL, TTL: 5, HasTTL: true}},
			{OpSetData, &SetDataRequest{Path: "/m", Data: []byte("x"), Version: 0}},
			{OpCheck, &PathVersionRequest{Path: "/m", Version: 1}},
			{OpDelete, &PathVersionRequest{Path: "/m", Version: -1}},
		}}, func() Record { return &MultiRequest{} }),
		c("MultiRequest/read", &MultiRequest{Ops: []MultiOp{
			{OpGetChildren, &PathWatchRequest{Path: "/"}},
			{OpGetData, &PathWatchRequest{Path: "/zookeeper"}},
		}}, func() Record { return &MultiRequest{} }),
		c("MultiRequest/empty", &MultiRequest{}, func() Record { return &MultiRequest{} }),
		c("MultiResponse", &MultiResponse{Results: []MultiResult{
			{Type: OpCreate, Resp: &PathRequest{Path: "/m"}},
			{Type: OpCreate2, Resp: &Create2Response{Path: "/m2", Stat: testStat}},
			{Type: OpSetData, Resp: &StatResponse{Stat: testStat}},
			{Type: OpCheck},
			{Type: OpDelete},
		}}, func() Record { return &MultiResponse{} }),
		c("MultiResponse/failed", &MultiResponse{Results: []MultiResult{
			{Type: OpError, Err: OK}, {Type: OpError, Err: ErrBadVersion}, {Type: OpError, Err: ErrRuntimeInconsistency},
		}}, func() Record { return &MultiResponse{} }),
		c("MultiResponse/read", &MultiResponse{Results: []MultiResult{
			{Type: OpGetChildren, Resp: &StringsResponse{Strings: []string{"zookeeper"}}},
			{Type: OpGetData, Resp: &GetDataResponse{Data: []byte{}, Stat: testStat}},
			{Type: OpError, Err: ErrNoNode},
		}}, func() Record { return &MultiResponse{} }),
		c("Empty", Empty{}, func() Record { return Empty{} }),
	}
}

// TestRoundTrip: encode → decode → equal value and identical bytes.
func TestRoundTrip(t *testing.T) {
	for _, tc := range rtCases() {
		t.Run(tc.name, func(t *testing.T) {
			b := Marshal(tc.rec)
			got := tc.fresh()
			if err := Unmarshal(b, got); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if !reflect.DeepEqual(got, tc.rec) {
				t.Fatalf("decoded %+v, want %+v", got, tc.rec)
			}
			if b2 := Marshal(got); !bytes.Equal(b, b2) {
				t.Fatalf("re-encoding differs:\n%x\n%x", b, b2)
			}
		})
	}
}

// TestNullVersusEmpty: buffers keep null (length -1) and empty (length 0)
// apart; strings and vectors read null as empty.
func TestNullVersusEmpty(t *testing.T) {
	if b := Marshal(&AuthPacket{}); !bytes.Equal(b[len(b)-4:], []byte{0xff, 0xff, 0xff, 0xff}) {
		t.Errorf("nil buffer encoded as %x, want length -1", b)
	}
	if b := Marshal(&AuthPacket{Auth: []byte{}}); !bytes.Equal(b[len(b)-4:], []byte{0, 0, 0, 0}) {
		t.Errorf("empty buffer encoded as %x, want length 0", b)
	}
	var null, empty GetDataResponse
	if err := Unmarshal(Marshal(&GetDataResponse{}), &null); err != nil || null.Data != nil {
		t.Errorf("null buffer decoded as %#v, %v", null.Data, err)
	}
	if err := Unmarshal(Marshal(&GetDataResponse{Data: []byte{}}), &empty); err != nil || empty.Data == nil || len(empty.Data) != 0 {
		t.Errorf("empty buffer decoded as %#v, %v", empty.Data, err)
	}
	// a null string and a null vector (as some clients send) read as empty
	var w Writer
	w.NullString()
	w.Int(-1)
	var sw PathRequest
	r := NewReader(w.Buf)
	if err := sw.Decode(r); err != nil || sw.Path != "" {
		t.Errorf("null string: %q, %v", sw.Path, err)
	}
	if v := r.Strings(); v != nil || r.Err() != nil {
		t.Errorf("null vector: %#v, %v", v, r.Err())
	}
	// decoded buffers do not alias the input
	in := Marshal(&AuthPacket{Scheme: "s", Auth: []byte("abc")})
	var ap AuthPacket
	if err := Unmarshal(in, &ap); err != nil {
		t.Fatal(err)
	}
	in[len(in)-1] = 'X'
	if string(ap.Auth) != "abc" {
		t.Errorf("decoded buffer aliases input: %q", ap.Auth)
	}
}

// TestBufferView: BufferView keeps null and empty apart like Buffer, aliases
// the input, and cannot be appended to over the bytes that follow.
func TestBufferView(t *testing.T) {
	var w Writer
	w.Buffer(nil)
	w.Buffer([]byte{})
	w.Buffer([]byte("abc"))
	w.Int(7)
	r := NewReader(w.Buf)
	if v := r.BufferView(); v != nil {
		t.Errorf("null: %#v", v)
	}
	if v := r.BufferView(); v == nil || len(v) != 0 {
		t.Errorf("empty: %#v", v)
	}
	v := r.BufferView()
	if string(v) != "abc" || cap(v) != 3 {
		t.Fatalf("abc: %q cap %d", v, cap(v))
	}
	w.Buf[len(w.Buf)-5] = 'C'
	if string(v) != "abC" {
		t.Errorf("view does not alias the input: %q", v)
	}
	_ = append(v, 'x')
	if r.Int() != 7 || r.Err() != nil {
		t.Errorf("bytes after the view changed: %v", r.Err())
	}
	if v := NewReader([]byte{0, 0, 0, 5, 1}).BufferView(); v != nil {
		t.Errorf("short buffer: %#v", v)
	}
}

// TestCommonIdentitiesDecodeWithoutAllocation: world:anyone and
// ip:127.0.0.1 decode to constants; any other identity to its own copy.
func TestCommonIdentitiesDecodeWithoutAllocation(t *testing.T) {
	for _, want := range []Id{{Scheme: "world", ID: "anyone"}, {Scheme: "ip", ID: "127.0.0.1"}, {Scheme: "digest", ID: "u:h"}, {}} {
		b := Marshal(&want)
		var got Id
		var r Reader
		n := testing.AllocsPerRun(50, func() {
			r.Reset(b)
			_ = got.Decode(&r)
		})
		if got != want || r.Err() != nil {
			t.Errorf("%+v decoded as %+v, %v", want, got, r.Err())
		}
		if common := want.Scheme != "digest"; common && n != 0 || !common && n != 1 {
			t.Errorf("%+v: %.0f allocations", want, n)
		}
	}
}

// TestConnectRequestReadOnly: the trailing readOnly byte is optional and
// its presence is remembered so the response can mirror it.
func TestConnectRequestReadOnly(t *testing.T) {
	with := Marshal(&ConnectRequest{TimeOut: 1, Passwd: make([]byte, 16), ReadOnly: true, HasReadOnly: true})
	without := Marshal(&ConnectRequest{TimeOut: 1, Passwd: make([]byte, 16)})
	if len(with) != 45 || len(without) != 44 {
		t.Fatalf("lengths %d and %d, want 45 and 44", len(with), len(without))
	}
	var a, b ConnectRequest
	if err := Unmarshal(with, &a); err != nil || !a.HasReadOnly || !a.ReadOnly {
		t.Errorf("with readOnly: %+v, %v", a, err)
	}
	if err := Unmarshal(without, &b); err != nil || b.HasReadOnly || b.ReadOnly {
		t.Errorf("without readOnly: %+v, %v", b, err)
	}
	if err := Unmarshal(append(with, 0), &a); err == nil {
		t.Error("trailing garbage after readOnly accepted")
	}
}

// TestUnmarshalTrailing: strict decoding rejects leftover bytes.
func TestUnmarshalTrailing(t *testing.T) {
	b := append(Marshal(&PathRequest{Path: "/a"}), 1)
	if err := Unmarshal(b, &PathRequest{}); err == nil {
		t.Fatal("trailing byte accepted")
	}
}

func TestNewRequestResponseTables(t *testing.T) {
	ops := []Op{OpCreate, OpDelete, OpExists, OpGetData, OpSetData, OpGetACL, OpSetACL, OpGetChildren, OpSync,
		OpPing, OpGetChildren2, OpCheck, OpMulti, OpCreate2, OpReconfig, OpCheckWatches, OpRemoveWatches,
		OpCreateContainer, OpDeleteContainer, OpCreateTTL, OpMultiRead, OpAuth, OpSetWatches, OpGetEphemerals,
		OpGetAllChildrenNumber, OpSetWatches2, OpAddWatch, OpWhoAmI, OpCloseSession}
	for _, op := range ops {
		if _, ok := NewRequest(op); !ok {
			t.Errorf("NewRequest(%d) = false", op)
		}
		if _, ok := NewResponse(op); !ok {
			t.Errorf("NewResponse(%d) = false", op)
		}
	}
	for _, op := range []Op{OpNotification, OpSASL, OpCreateSession, OpError, 10, 23, 99, 108, -12} {
		if _, ok := NewRequest(op); ok {
			t.Errorf("NewRequest(%d) = true", op)
		}
	}
	if r, _ := NewRequest(OpCreateTTL); !r.(*CreateRequest).HasTTL {
		t.Error("createTTL record without HasTTL")
	}
	if r, _ := NewRequest(OpSetWatches2); !r.(*SetWatches).V2 {
		t.Error("setWatches2 record without V2")
	}
	// each call returns a fresh record
	a, _ := NewRequest(OpCreate)
	b, _ := NewRequest(OpCreate)
	if a == b {
		t.Error("NewRequest returned a shared record")
	}
}
