package znode

import (
	"reflect"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

// TestTxnEncodedSize checks EncodedSize is exactly what Encode writes.
func TestTxnEncodedSize(t *testing.T) {
	for _, txn := range []*Txn{
		{Type: jute.OpSetData, Session: 1, Time: 2, Req: make([]byte, 117)},
		{Type: jute.OpCreateSession, Session: 3, Timeout: 4000, Passwd: make([]byte, 16)},
		{Type: jute.OpCreate, Ids: []jute.Id{{Scheme: "ip", ID: "127.0.0.1"}, {Scheme: "digest", ID: "u:x"}}, Req: []byte{1}},
		NewDeleteContainerTxn("/a/b", 5),
	} {
		var w jute.Writer
		txn.Encode(&w)
		if got := txn.EncodedSize(); got != len(w.Buf) {
			t.Errorf("%v: EncodedSize %d, Encode wrote %d", txn.Type, got, len(w.Buf))
		}
	}
}

// TestTxnDecoder checks the decoder used on a member's log agrees with
// DecodeTxn, shares the identities of consecutive transactions only while
// their encoding repeats, and rejects what DecodeTxn rejects.
func TestTxnDecoder(t *testing.T) {
	ip := []jute.Id{{Scheme: "ip", ID: "127.0.0.1"}}
	two := []jute.Id{{Scheme: "ip", ID: "127.0.0.1"}, {Scheme: "digest", ID: "u:x"}}
	in := []*Txn{
		{Type: jute.OpSetData, Session: 1, Time: 2, Ids: ip, Req: []byte{1, 2, 3}},
		{Type: jute.OpSetData, Session: 1, Time: 3, Ids: ip, Req: []byte{4}},
		{Type: jute.OpCreate, Session: 2, Time: 4, Ids: two, Req: []byte{}},
		{Type: jute.OpCloseSession, Session: 2, Time: 5},
		{Type: jute.OpCreateSession, Session: 3, Timeout: 4000, Passwd: []byte{9, 9}, Ids: ip},
		{Type: jute.OpDelete, Session: 3, Ids: []jute.Id{{Scheme: "ip", ID: "127.0.0.2"}}, Req: []byte{7}},
	}
	var d TxnDecoder
	out := make([]*Txn, len(in))
	for i, txn := range in {
		var w jute.Writer
		txn.Encode(&w)
		want, err := DecodeTxn(w.Buf)
		if err != nil {
			t.Fatal(err)
		}
		got, err := d.Decode(w.Buf)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("txn %d: decoder %+v, DecodeTxn %+v", i, got, want)
		}
		out[i] = got
		for n := range w.Buf {
			if _, err := d.Decode(w.Buf[:n]); err == nil {
				t.Fatalf("txn %d truncated at %d decoded", i, n)
			}
		}
		if _, err := d.Decode(append(w.Buf, 0)); err == nil {
			t.Fatalf("txn %d: trailing byte accepted", i)
		}
	}
	if &out[0].Ids[0] != &out[1].Ids[0] {
		t.Error("a session's repeated identities were decoded again")
	}
	if &out[1].Ids[0] == &out[4].Ids[0] {
		// Not wrong, but the cache holds one encoding: txn 2's came between.
		t.Error("identities reused across a different encoding")
	}
	if out[5].Ids[0].ID != "127.0.0.2" || out[4].Ids[0].ID != "127.0.0.1" {
		t.Errorf("identities mixed up: %+v %+v", out[4].Ids, out[5].Ids)
	}
}

// FuzzTxnDecoder checks the decoder agrees with DecodeTxn on any input,
// fresh and with its identities cache primed by the same input.
func FuzzTxnDecoder(f *testing.F) {
	for _, txn := range []*Txn{
		{Type: jute.OpSetData, Session: 1, Time: 2, Ids: []jute.Id{{Scheme: "ip", ID: "127.0.0.1"}}, Req: []byte{1}},
		{Type: jute.OpCreateSession, Session: 3, Timeout: 4000, Passwd: make([]byte, 16)},
	} {
		var w jute.Writer
		txn.Encode(&w)
		f.Add(w.Buf)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		want, werr := DecodeTxn(b)
		var d TxnDecoder
		for range 2 {
			got, err := d.Decode(b)
			if (err == nil) != (werr == nil) {
				t.Fatalf("decoder error %v, DecodeTxn error %v", err, werr)
			}
			if err == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("decoder %+v, DecodeTxn %+v", got, want)
			}
		}
	})
}
