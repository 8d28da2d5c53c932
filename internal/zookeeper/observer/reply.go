package observer

import (
	"encoding/binary"

	"github.com/zkraft/zkraft/internal/zookeeper/learner"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// reply builds the answer to a forwarded request of type op from what
// the leader's transaction gave here, as ZooKeeper's
// FinalRequestProcessor builds it from its own application.
func reply(op jute.Op, out learner.Outcome) *znode.Result {
	res := &znode.Result{Zxid: out.Txn.Zxid, Err: out.Err}
	if out.Err != jute.OK {
		return res
	}
	if op == jute.OpMulti {
		res.Resp = multiReply(out)
		return res
	}
	if len(out.Results) > 0 {
		r := out.Results[0]
		res.Resp, res.Err = r.Resp, r.Err
	}
	return res
}

// multiReply builds a multi's MultiResponse from its MultiTxn {vector<Txn
// {int type, buffer data}>}, as ZooKeeper's DataTree.processTxn does. A
// failed multi holds an error transaction from the failing op on (the
// ops before it keep their own transactions, which are not applied): it
// answers an ErrorResult per op, OK before the failure. A multi that
// succeeded answers one result per op, from applying it here in order (a
// check changes nothing and has no result of its own).
func multiReply(out learner.Outcome) *jute.MultiResponse {
	type sub struct {
		typ  jute.Op
		data []byte
	}
	r := jute.NewReader(out.Txn.Body)
	n, _ := r.Count(8)
	subs := make([]sub, 0, n)
	failed := false
	for i := 0; i < n && r.Err() == nil; i++ {
		s := sub{typ: jute.Op(r.Int()), data: r.Buffer()}
		failed = failed || s.typ == jute.OpError
		subs = append(subs, s)
	}
	resp := &jute.MultiResponse{Results: make([]jute.MultiResult, 0, len(subs))}
	if failed {
		for _, s := range subs {
			code := jute.OK
			if s.typ == jute.OpError && len(s.data) >= 4 {
				code = jute.ErrCode(int32(binary.BigEndian.Uint32(s.data)))
			}
			resp.Results = append(resp.Results, jute.MultiResult{Type: jute.OpError, Err: code})
		}
		return resp
	}
	applied := out.Results
	next := func() jute.Record {
		if len(applied) == 0 {
			return nil
		}
		x := applied[0]
		applied = applied[1:]
		return x.Resp
	}
	for _, s := range subs {
		switch s.typ {
		case jute.OpCheck:
			resp.Results = append(resp.Results, jute.MultiResult{Type: jute.OpCheck})
		case jute.OpCreate:
			resp.Results = append(resp.Results, jute.MultiResult{Type: jute.OpCreate, Resp: next()})
		case jute.OpCreate2, jute.OpCreateContainer, jute.OpCreateTTL:
			resp.Results = append(resp.Results, jute.MultiResult{Type: jute.OpCreate2, Resp: next()})
		case jute.OpDelete, jute.OpDeleteContainer:
			next()
			resp.Results = append(resp.Results, jute.MultiResult{Type: jute.OpDelete})
		case jute.OpSetData:
			resp.Results = append(resp.Results, jute.MultiResult{Type: jute.OpSetData, Resp: next()})
		}
	}
	return resp
}
