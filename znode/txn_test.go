package znode

import (
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
