package observer

import (
	"encoding/hex"
	"testing"

	"github.com/zkraft/zkraft/internal/zookeeper/datadir"
	"github.com/zkraft/zkraft/internal/zookeeper/learner"
	"github.com/zkraft/zkraft/jute"
)

// TestFailedMultiReply: ZooKeeper 3.8's transaction for a multi whose
// second op (a check) failed keeps the first op's create transaction and
// an error transaction (-103) for the check; the client is answered
// OK, BadVersion as ErrorResults, as DataTree.processTxn turns it.
func TestFailedMultiReply(t *testing.T) {
	body, _ := hex.DecodeString("00000002000000010000002e000000062f6d69672f6effffffff000000010000001f00000005776f726c6400000006616e796f6e650000000003ffffffff00000004ffffff99")
	res := reply(jute.OpMulti, learner.Outcome{Txn: datadir.Txn{Type: jute.OpMulti, Zxid: 7, Body: body}})
	if res.Err != jute.OK || res.Zxid != 7 {
		t.Fatalf("header %v zxid %d", res.Err, res.Zxid)
	}
	m, ok := res.Resp.(*jute.MultiResponse)
	if !ok || len(m.Results) != 2 {
		t.Fatalf("reply %#v", res.Resp)
	}
	want := []jute.ErrCode{jute.OK, jute.ErrBadVersion}
	for i, r := range m.Results {
		if r.Type != jute.OpError || r.Err != want[i] {
			t.Errorf("result %d: %+v, want an ErrorResult %v", i, r, want[i])
		}
	}
	// It encodes and decodes as a client reads it.
	var back jute.MultiResponse
	if err := jute.Unmarshal(jute.Marshal(m), &back); err != nil || len(back.Results) != 2 {
		t.Fatalf("round trip: %+v, %v", back, err)
	}
}

// TestErrorTxnReply: a request the leader refused is answered with the
// error transaction's code and zxid, and no body.
func TestErrorTxnReply(t *testing.T) {
	res := reply(jute.OpSetData, learner.Outcome{Txn: datadir.Txn{Type: jute.OpError, Zxid: 9}, Err: jute.ErrBadVersion})
	if res.Err != jute.ErrBadVersion || res.Zxid != 9 || res.Resp != nil {
		t.Fatalf("%+v", res)
	}
}
