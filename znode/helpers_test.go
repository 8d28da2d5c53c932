package znode

import (
	"testing"

	"github.com/zkraft/zkraft/jute"
)

var (
	openACL = []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}
	ipIDs   = []jute.Id{{Scheme: "ip", ID: "127.0.0.1"}}
)

const testSession = 0x100

// harness applies transactions with increasing zxids and a fixed clock.
type harness struct {
	t    *testing.T
	tree *Tree
	zxid int64
	now  int64
	ids  []jute.Id
	sess int64
}

func newHarness(t *testing.T, opts Options) *harness {
	t.Helper()
	h := &harness{t: t, tree: NewTree(opts), now: 1_000_000, ids: ipIDs, sess: testSession}
	if r := h.apply(&Txn{Type: jute.OpCreateSession, Session: testSession, Timeout: 30000, Passwd: make([]byte, 16)}); r.Err != jute.OK {
		t.Fatalf("createSession: %v", r.Err)
	}
	return h
}

// apply encodes and decodes txn (exercising the codec) and applies it.
func (h *harness) apply(txn *Txn) *Result {
	h.t.Helper()
	var w jute.Writer
	txn.Encode(&w)
	dec, err := DecodeTxn(w.Buf)
	if err != nil {
		h.t.Fatalf("DecodeTxn: %v", err)
	}
	h.zxid++
	if dec.Time == 0 {
		dec.Time = h.now
	}
	return h.tree.Apply(dec, h.zxid)
}

func (h *harness) write(op jute.Op, req jute.Record) *Result {
	h.t.Helper()
	return h.apply(&Txn{Type: op, Session: h.sess, Ids: h.ids, Req: jute.Marshal(req)})
}

func (h *harness) create(path string, data []byte, flags int32) *Result {
	h.t.Helper()
	return h.write(jute.OpCreate, &jute.CreateRequest{Path: path, Data: data, ACL: openACL, Flags: flags})
}

// mustCreate creates path (persistent, open ACL) and fails the test otherwise.
func (h *harness) mustCreate(path string, data []byte, flags int32) string {
	h.t.Helper()
	r := h.create(path, data, flags)
	if r.Err != jute.OK {
		h.t.Fatalf("create %s: %v", path, r.Err)
	}
	return r.Resp.(*jute.PathRequest).Path
}

func (h *harness) stat(path string) jute.Stat {
	h.t.Helper()
	st, err := h.tree.Exists(path, nil)
	if err != nil {
		h.t.Fatalf("exists %s: %v", path, err)
	}
	return st
}

// allNodes returns every node of tr by path.
func allNodes(tr *Tree) map[string]*node {
	out := map[string]*node{}
	var scratch []childEntry
	walkSorted(RootPath, tr.root, &scratch, func(p string, n *node) { out[p] = n })
	return out
}
