package session

import (
	"bytes"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/internal/testing/rawclient"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// slowWrites is a member whose creates are proposed 100 ms late, and
// which counts the read-lock holds taken on its tree.
type slowWrites struct {
	*ensemble.Node
	holds atomic.Int64
}

func (s *slowWrites) RLockTree() *znode.Tree {
	s.holds.Add(1)
	return s.Node.RLockTree()
}

func (s *slowWrites) Propose(txn *znode.Txn, w backend.Waiter) {
	if txn.Type != jute.OpCreate { // the session's own (its announcement) as they come
		s.Node.Propose(txn, w)
		return
	}
	late := *txn
	late.Req = bytes.Clone(txn.Req) // the request's frame is the reader's
	time.AfterFunc(100*time.Millisecond, func() { s.Node.Propose(&late, w) })
}

// TestLargeReadsAreNotParked: a read that arrives while a write of its
// connection is in flight waits for it, parked, and is answered by the
// FSM right after the write, under the tree's write lock, which cannot be
// let go: every other client's writes wait meanwhile. A multiRead or a
// SetWatches of up to jute.maxbuffer does work in proportion to its
// size (67,000 getData: 20-30 ms), so a client pipelining a write and
// such a read, again and again, had the FSM do its reads (another
// client's creates: 33 in 3 s, against 253 when the same reads were not
// behind a write). A read larger than maxParkedBody is not parked: the
// reader waits for the writes before it and answers it itself, letting
// the read lock go every relockEvery ops; the replies keep their order.
func TestLargeReadsAreNotParked(t *testing.T) {
	be := &slowWrites{Node: standaloneNode(t)}
	_, addr := serveOn(t, be)

	c := rawclient.Dial(t, addr)
	c.Connect(false)
	const ops = 5 * relockEvery
	mr := &jute.MultiRequest{}
	for range ops {
		mr.Ops = append(mr.Ops, jute.MultiOp{Type: jute.OpGetData, Req: &jute.PathWatchRequest{Path: "/w"}})
	}
	before := be.holds.Load()
	var w jute.Writer
	for _, r := range []struct {
		xid  int32
		op   jute.Op
		body jute.Record
	}{{1, jute.OpCreate, &jute.CreateRequest{Path: "/w", Data: []byte("d"), ACL: openACL}}, {2, jute.OpMultiRead, mr}} {
		at := jute.BeginFrame(&w)
		(&jute.RequestHeader{Xid: r.xid, Type: r.op}).Encode(&w)
		r.body.Encode(&w)
		jute.EndFrame(&w, at)
	}
	c.SendRaw(w.Buf) // the multiRead arrives while the create is in flight
	if h := c.Reply(nil); h.Xid != 1 || h.Err != jute.OK {
		t.Fatalf("first reply: %+v, want the create's", h)
	}
	var resp jute.MultiResponse
	if h := c.Reply(&resp); h.Xid != 2 || h.Err != jute.OK || len(resp.Results) != ops {
		t.Fatalf("second reply: %+v, %d results, want the multiRead's %d", h, len(resp.Results), ops)
	}
	if got := resp.Results[ops-1].Resp.(*jute.GetDataResponse); string(got.Data) != "d" {
		t.Fatalf("the multiRead read %q, not the create's data", got.Data)
	}
	if got := be.holds.Load() - before; got < ops/relockEvery {
		t.Errorf("the multiRead behind a write was answered in %d read-lock holds, want at least %d: the FSM answered it", got, ops/relockEvery)
	}
}
