package session

import (
	"errors"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// answerRead answers one read-class request against t, which the caller
// holds locked (read lock from the reader goroutine, write lock from the
// FSM for parked reads). Watches are registered under that same lock, so no
// change can slip between the read and the registration.
//
// Every read holds the lock for a bounded time, whatever the size of the
// tree or of its reply (docs/DESIGN.md): large replies are encoded later
// (lazy.go), and a request whose work grows with its own size (SetWatches,
// multiRead: at most jute.maxbuffer) lets the lock go every relockEvery
// paths when relock, the backend whose read lock the caller holds, is
// given (the reader goroutine; the FSM cannot let its write lock go).
func (c *conn) answerRead(t *znode.Tree, h jute.RequestHeader, body []byte, relock backend.Backend) {
	if c.out.isGone() {
		return // nobody will read the answer
	}
	zxid := t.LastZxid()
	var rd jute.Reader // on the stack: every decode below is a static call
	rd.Reset(body)
	r := &rd
	reply := func(code jute.ErrCode, resp jute.Record) {
		c.out.reply(h.Xid, zxid, code, resp)
		c.countSent()
	}
	reg := c.srv.backend().Watches()
	ids := c.Ids()
	switch h.Type {
	case jute.OpPing:
		reply(jute.OK, nil)
	case jute.OpExists:
		var req jute.PathWatchRequest
		if !c.decoded(req.Decode(r), h, zxid) {
			return
		}
		stat, err := t.Exists(req.Path, ids)
		code := errCode(err)
		if req.Watch {
			switch code {
			case jute.OK:
				reg.AddData(req.Path, c)
			case jute.ErrNoNode:
				reg.AddExist(req.Path, c)
			}
		}
		resp := jute.StatResponse{Stat: stat}
		c.replyWith(h, zxid, code, resp.Encode)
	case jute.OpGetData:
		var req jute.PathWatchRequest
		if !c.decoded(req.Decode(r), h, zxid) {
			return
		}
		data, stat, err := t.GetData(req.Path, ids)
		if err != nil {
			reply(errCode(err), nil)
			return
		}
		if req.Watch {
			reg.AddData(req.Path, c)
		}
		c.dataReply(h, zxid, data, stat)
	case jute.OpGetChildren, jute.OpGetChildren2:
		var req jute.PathWatchRequest
		if !c.decoded(req.Decode(r), h, zxid) {
			return
		}
		names, stat, err := t.ChildNames(req.Path, ids)
		if err != nil {
			reply(errCode(err), nil)
			return
		}
		if req.Watch {
			reg.AddChild(req.Path, c)
		}
		c.childrenReply(h, zxid, names, stat, h.Type == jute.OpGetChildren2)
	case jute.OpGetACL:
		var req jute.PathRequest
		if !c.decoded(req.Decode(r), h, zxid) {
			return
		}
		acl, stat, err := t.GetACL(req.Path, ids)
		reply(errCode(err), &jute.GetACLResponse{ACL: acl, Stat: stat})
	case jute.OpSync:
		var req jute.PathRequest
		if !c.decoded(req.Decode(r), h, zxid) {
			return
		}
		reply(jute.OK, &req)
	case jute.OpGetEphemerals:
		var req jute.PathRequest
		if !c.decoded(req.Decode(r), h, zxid) {
			return
		}
		c.ephemeralsReply(h, zxid, t.EphemeralNames(c.sessionID), req.Path)
	case jute.OpGetAllChildrenNumber:
		var req jute.PathRequest
		if !c.decoded(req.Decode(r), h, zxid) {
			return
		}
		n, err := t.GetAllChildrenNumber(req.Path, ids)
		reply(errCode(err), &jute.IntResponse{N: n})
	case jute.OpWhoAmI:
		reply(jute.OK, whoAmI(ids))
	case jute.OpSetWatches, jute.OpSetWatches2:
		req := jute.SetWatches{V2: h.Type == jute.OpSetWatches2}
		if !c.decoded(req.Decode(r), h, zxid) {
			return
		}
		c.setWatches(t, &req, relock)
		reply(jute.OK, nil)
	case jute.OpAddWatch, jute.OpCheckWatches, jute.OpRemoveWatches:
		var req jute.PathTypeRequest
		if !c.decoded(req.Decode(r), h, zxid) {
			return
		}
		code, resp := c.watchOp(h.Type, &req)
		reply(code, resp)
	case jute.OpMultiRead:
		var req jute.MultiRequest
		// Its own reader: MultiRequest.Decode hands its reader to each op's
		// Decode through an interface, which would move rd to the heap.
		if !c.decoded(req.Decode(jute.NewReader(body)), h, zxid) {
			return
		}
		resp, size, code := multiRead(t, &req, ids, relock)
		switch {
		case code != jute.OK:
			reply(code, nil)
		case size >= lazyReplyMin:
			// Every result is immutable (data, ChildNames), and size is
			// exact: the writer encodes it a result (a name) at a time.
			c.out.replyLazy(h.Xid, zxid, frameOverhead+size, true, multiReadBody(resp.Results))
			c.countSent()
		default:
			reply(jute.OK, resp)
		}
	}
}

// decoded reports whether a request body decoded (trailing bytes are
// ignored, as ZooKeeper does). A body that does not decode is answered
// with MarshallingError (-5) and the connection stays open, as ZooKeeper
// answers it.
func (c *conn) decoded(err error, h jute.RequestHeader, zxid int64) bool {
	if err != nil {
		c.out.reply(h.Xid, zxid, jute.ErrMarshallingError, nil)
		c.countSent()
		return false
	}
	return true
}

// replyWith answers h with a body written by encode (see
// outbound.replyWith): the hot reads reply without a heap allocation.
func (c *conn) replyWith(h jute.RequestHeader, zxid int64, code jute.ErrCode, encode func(*jute.Writer)) {
	c.out.replyWith(h.Xid, zxid, code, encode)
	c.countSent()
}

// errCode maps a tree error to its wire code.
func errCode(err error) jute.ErrCode {
	if err == nil {
		return jute.OK
	}
	if code, ok := err.(jute.ErrCode); ok {
		return code
	}
	return jute.ErrSystemError
}

// multiRead evaluates getData and getChildren ops independently. As in
// ZooKeeper (whose MultiOperationRecord keeps only an op's path), the
// ops' watch flags are ignored: a multiRead sets no watch. Any other op
// fails the whole request with MarshallingError, ZooKeeper's answer when
// its FinalRequestProcessor throws at such an op. The results hold only
// immutable data (a node's data, a ChildNames), so the response may be
// encoded after the tree's lock is released; size is its encoded length.
func multiRead(t *znode.Tree, req *jute.MultiRequest, ids []jute.Id, relock backend.Backend) (*jute.MultiResponse, int, jute.ErrCode) {
	out := &jute.MultiResponse{Results: make([]jute.MultiResult, 0, len(req.Ops))}
	size := 0
	for i, op := range req.Ops {
		if relock != nil && i > 0 && i%relockEvery == 0 {
			t = relockTree(relock) // the ops are independent, as in ZooKeeper
		}
		pw, ok := op.Req.(*jute.PathWatchRequest)
		if !ok || (op.Type != jute.OpGetData && op.Type != jute.OpGetChildren) {
			return nil, 0, jute.ErrMarshallingError
		}
		var res jute.MultiResult
		var body int
		if op.Type == jute.OpGetData {
			data, stat, err := t.GetData(pw.Path, ids)
			res = jute.MultiResult{Type: jute.OpGetData, Resp: &jute.GetDataResponse{Data: data, Stat: stat}}
			body = 4 + len(data) + statSize
			if err != nil {
				res = jute.MultiResult{Type: jute.OpError, Err: errCode(err)}
			}
		} else {
			names, _, err := t.ChildNames(pw.Path, ids)
			res = jute.MultiResult{Type: jute.OpGetChildren, Resp: &namesRecord{names: names}}
			body = namesSize(names)
			if err != nil {
				res = jute.MultiResult{Type: jute.OpError, Err: errCode(err)}
			}
		}
		if res.Type == jute.OpError {
			body = 4 // the error code
		}
		size += multiHeaderSize + body
		out.Results = append(out.Results, res)
	}
	return out, size + multiHeaderSize, jute.OK // the closing header
}

// multiHeaderSize is a MultiHeader's encoded size: type, done, err.
const multiHeaderSize = 4 + 1 + 4

// multiReadBody encodes a multiRead's results as MultiResponse.Encode
// does, calling spill after each result and each child name.
func multiReadBody(results []jute.MultiResult) lazyBody {
	return func(w *jute.Writer, spill func()) {
		for _, res := range results {
			h := jute.MultiHeader{Type: res.Type, Err: jute.OK}
			if res.Type == jute.OpError {
				h.Err = res.Err
			}
			h.Encode(w)
			switch names, ok := res.Resp.(*namesRecord); {
			case res.Type == jute.OpError:
				w.Int(int32(res.Err))
			case ok:
				encodeNames(w, names.names, spill)
			case res.Resp != nil:
				res.Resp.Encode(w)
			}
			spill()
		}
		end := jute.MultiHeader{Type: -1, Done: true, Err: -1}
		end.Encode(w)
	}
}

// namesRecord is a getChildren result (a StringsResponse) over a
// ChildNames; it is only ever encoded.
type namesRecord struct{ names znode.ChildNames }

// Encode implements jute.Record.
func (r *namesRecord) Encode(w *jute.Writer) { encodeNames(w, r.names, noSpill) }

// Decode implements jute.Record; a namesRecord is never decoded.
func (r *namesRecord) Decode(*jute.Reader) error { return errEncodeOnly }

// errEncodeOnly is namesRecord's Decode error.
var errEncodeOnly = errors.New("session: an encode-only record")
