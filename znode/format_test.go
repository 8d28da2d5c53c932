package znode

import (
	"bytes"
	"encoding/hex"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

// TestFormat1TxnsStillDecode: log entries written before format 2 (the
// golden file was encoded by 7d71c65) decode to what they carried: their
// identities in Ids, no key, no stamped options.
func TestFormat1TxnsStillDecode(t *testing.T) {
	b, err := os.ReadFile("../testdata/log/txn-format1.hex")
	if err != nil {
		t.Fatal(err)
	}
	var got []*Txn
	for _, line := range strings.Fields(string(b)) {
		raw, err := hex.DecodeString(line)
		if err != nil {
			t.Fatal(err)
		}
		txn, err := DecodeTxn(raw)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		got = append(got, txn)
	}
	if len(got) != 4 || got[0].Type != jute.OpCreateSession || string(got[0].Passwd) != "0123456789abcdef" ||
		got[1].Type != jute.OpCreate || len(got[1].Ids) != 2 || got[1].Ids[1].ID != "alice:x" ||
		got[2].Type != jute.OpSetData || got[3].Type != jute.OpDeleteContainer {
		t.Fatalf("decoded %+v", got)
	}
	for _, txn := range got {
		if txn.Options != 0 || txn.IdsKey != 0 {
			t.Errorf("%v: options %#x, key %#x from a format 1 entry", txn.Type, txn.Options, txn.IdsKey)
		}
	}
	// Applied, they behave as they did: the auth ACL expands to the
	// identities the entry carried.
	tr := NewTree(Options{})
	for i, txn := range got[:2] {
		if r := tr.Apply(txn, int64(i+1)); r.Err != jute.OK {
			t.Fatalf("%v: %v", txn.Type, r.Err)
		}
	}
	if r := tr.Apply(got[2], 3); r.Err != jute.ErrNoAuth { // only the ip identity: not alice
		t.Fatalf("setData without alice's identity: %v", r.Err)
	}
	list, _ := tr.NodeACL("/a")
	if len(list) != 1 || list[0].ID != (jute.Id{Scheme: "digest", ID: "alice:x"}) {
		t.Fatalf("auth ACL expanded to %+v", list)
	}
}

// TestTxnFormat2RoundTrip: options and the identity key survive encoding,
// and StampOptions changes them in place.
func TestTxnFormat2RoundTrip(t *testing.T) {
	in := &Txn{Type: jute.OpSetData, Options: Options{SkipACL: true}.Bits(), Session: 7, Time: 9, IdsKey: 0xdeadbeef, Req: []byte{1}}
	var w jute.Writer
	in.Encode(&w)
	out, err := DecodeTxn(w.Buf)
	if err != nil || !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip: %+v %v", out, err)
	}
	if !StampOptions(w.Buf, Options{EnforceQuota: true}.Bits()) {
		t.Fatal("StampOptions refused a format 2 entry")
	}
	out, _ = DecodeTxn(w.Buf)
	if o, ok := out.Options.Options(); !ok || o != (Options{EnforceQuota: true}) {
		t.Fatalf("stamped options %+v %v", o, ok)
	}
	w.Buf[1] = 0x40 // an option bit no build knows
	if _, err := DecodeTxn(w.Buf); err == nil {
		t.Fatal("unknown option bits decoded")
	}
	if StampOptions([]byte{txnFormat1, 0}, Options{}.Bits()) {
		t.Fatal("stamped a format 1 entry")
	}
}

// TestStampedOptionsDecideTheWrite: a write applies with the options it
// carries whatever the member's own (on 7d71c65 each member applied with
// its own skipACL, extendedTypesEnabled and enforceQuota, so one member
// started differently diverged from the others); unstamped ones with the
// member's.
func TestStampedOptionsDecideTheWrite(t *testing.T) {
	ttl := func(opts OptionBits) *Txn {
		return &Txn{Type: jute.OpCreateTTL, Options: opts, Session: 1, Time: 5,
			Req: jute.Marshal(&jute.CreateRequest{Path: "/t", ACL: openACL, Flags: jute.FlagPersistentTTL, HasTTL: true, TTL: 1000})}
	}
	for _, tc := range []struct {
		own  Options
		txn  OptionBits
		want jute.ErrCode
	}{
		{Options{}, 0, jute.ErrUnimplemented},
		{Options{ExtendedTypes: true}, 0, jute.OK},
		{Options{}, Options{ExtendedTypes: true}.Bits(), jute.OK},
		{Options{ExtendedTypes: true}, Options{}.Bits(), jute.ErrUnimplemented},
	} {
		tr := NewTree(tc.own)
		tr.Apply(&Txn{Type: jute.OpCreateSession, Session: 1, Timeout: 4000, Passwd: make([]byte, 16)}, 1)
		if r := tr.Apply(ttl(tc.txn), 2); r.Err != tc.want {
			t.Errorf("own %+v, stamped %#x: %v, want %v", tc.own, tc.txn, r.Err, tc.want)
		}
		if tr.opts != tc.own {
			t.Errorf("the member's own options changed to %+v", tr.opts)
		}
	}
	// skipACL: the leader's decides a write on a node only alice may change.
	tr := NewTree(Options{})
	tr.Apply(&Txn{Type: jute.OpCreateSession, Session: 1, Timeout: 4000, Passwd: make([]byte, 16)}, 1)
	alice := []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "digest", ID: "alice:x"}}}
	tr.Apply(&Txn{Type: jute.OpCreate, Session: 1, Req: jute.Marshal(&jute.CreateRequest{Path: "/p", ACL: alice})}, 2)
	set := func(opts OptionBits) jute.ErrCode {
		return tr.Apply(&Txn{Type: jute.OpSetData, Options: opts, Session: 1,
			Req: jute.Marshal(&jute.SetDataRequest{Path: "/p", Data: []byte("x"), Version: -1})}, 3).Err
	}
	if got := set(Options{}.Bits()); got != jute.ErrNoAuth {
		t.Errorf("without skipACL: %v", got)
	}
	if got := set(Options{SkipACL: true}.Bits()); got != jute.OK {
		t.Errorf("with the leader's skipACL: %v", got)
	}
}

// TestIdentitySets: a session records its identities once and its writes
// name them by key; an unknown key answers SessionMoved; only the newest
// sets are kept; sets over the bounds are refused; snapshots keep them.
func TestIdentitySets(t *testing.T) {
	tr := NewTree(Options{})
	z := int64(0)
	apply := func(txn *Txn) *Result { z++; return tr.Apply(txn, z) }
	apply(&Txn{Type: jute.OpCreateSession, Session: 1, Timeout: 4000, Passwd: make([]byte, 16)})
	alice := []jute.Id{{Scheme: "ip", ID: "127.0.0.1"}, {Scheme: "digest", ID: "alice:x"}}
	if r := apply(&Txn{Type: OpSetIdentities, Session: 1, Ids: alice}); r.Err != jute.OK {
		t.Fatal(r.Err)
	}
	key := IdentityKey(alice)
	// The auth scheme expands to the recorded set.
	if r := apply(&Txn{Type: jute.OpCreate, Session: 1, IdsKey: key, Req: jute.Marshal(&jute.CreateRequest{Path: "/a",
		ACL: []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "auth"}}}})}); r.Err != jute.OK {
		t.Fatal(r.Err)
	}
	setA := func(k uint64) jute.ErrCode {
		return apply(&Txn{Type: jute.OpSetData, Session: 1, IdsKey: k, Req: jute.Marshal(&jute.SetDataRequest{Path: "/a", Version: -1})}).Err
	}
	if got := setA(key); got != jute.OK {
		t.Fatalf("write as alice: %v", got)
	}
	if got := setA(12345); got != jute.ErrSessionMoved {
		t.Fatalf("unknown key: %v", got)
	}
	// A newer set does not evict alice's until maxIdentitySets more came.
	for i := 0; i < maxIdentitySets-1; i++ {
		apply(&Txn{Type: OpSetIdentities, Session: 1, Ids: []jute.Id{{Scheme: "ip", ID: "10.0.0." + string(rune('1'+i))}}})
	}
	if got := setA(key); got != jute.OK {
		t.Fatalf("alice's set evicted early: %v", got)
	}
	var b bytes.Buffer
	if err := tr.WriteSnapshot(&b); err != nil {
		t.Fatal(err)
	}
	back, err := ReadSnapshot(&b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	si, _ := back.Session(1)
	if len(si.Identities) != maxIdentitySets || !reflect.DeepEqual(si.Identities[0], alice) {
		t.Fatalf("restored sets %+v", si.Identities)
	}
	if r := back.Apply(&Txn{Type: jute.OpSetData, Session: 1, IdsKey: key, Req: jute.Marshal(&jute.SetDataRequest{Path: "/a", Version: -1})}, z+1); r.Err != jute.OK {
		t.Fatalf("write as alice after a restore: %v", r.Err)
	}
	apply(&Txn{Type: OpSetIdentities, Session: 1, Ids: []jute.Id{{Scheme: "ip", ID: "10.0.0.9"}}})
	if got := setA(key); got != jute.ErrSessionMoved {
		t.Fatalf("alice's set outlived %d newer ones: %v", maxIdentitySets, got)
	}
	// Bounds.
	big := []jute.Id{{Scheme: "digest", ID: strings.Repeat("u", MaxIdentityBytes) + ":x"}}
	if r := apply(&Txn{Type: OpSetIdentities, Session: 1, Ids: big}); r.Err != jute.ErrBadArguments {
		t.Fatalf("a set over the bounds: %v", r.Err)
	}
	many := make([]jute.Id, MaxIdentities+1)
	for i := range many {
		many[i] = jute.Id{Scheme: "digest", ID: "u:" + string(rune('a'+i))}
	}
	if r := apply(&Txn{Type: OpSetIdentities, Session: 1, Ids: many}); r.Err != jute.ErrBadArguments {
		t.Fatalf("too many identities: %v", r.Err)
	}
	if r := apply(&Txn{Type: OpSetIdentities, Session: 99, Ids: alice}); r.Err != jute.ErrSessionExpired {
		t.Fatalf("no session: %v", r.Err)
	}
}

// TestSnapshotVersion1StillReads: a snapshot written by 7d71c65 (format 1,
// sessions without identity sets) loads.
func TestSnapshotVersion1StillReads(t *testing.T) {
	b, err := os.ReadFile("../testdata/log/snapshot-v1.bin")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := ReadSnapshot(bytes.NewReader(b), Options{})
	if err != nil {
		t.Fatal(err)
	}
	si, ok := tr.Session(0x42)
	data, _, derr := tr.GetData("/a/e", nil)
	if !ok || si.Timeout != 6000 || si.Identities != nil || derr != nil || string(data) != "w" ||
		len(tr.GetEphemerals(0x42, "")) != 1 {
		t.Fatalf("session %+v %v, /a/e %q %v", si, ok, data, derr)
	}
}
