package znode

import "github.com/zkraft/zkraft/jute"

// applyMulti applies a multi all-or-nothing under one zxid. On the first
// failing op everything done so far is rolled back (parent cversion and
// pzxid included), no events fire, and the reply is a MultiResponse of
// ErrorResults: OK for earlier ops, the failure's code for the failing op and
// RuntimeInconsistency for later ones. The reply header code stays OK.
//
// A multi ZooKeeper cannot decode fails as a whole with MarshallingError
// and changes nothing (multiDecodes).
func (a *applier) applyMulti(req *jute.MultiRequest) (jute.Record, error) {
	if !multiDecodes(req) {
		return nil, jute.ErrMarshallingError
	}
	if err := a.checkSession(); err != nil {
		return nil, err
	}
	a.multi = true
	results := make([]jute.MultiResult, 0, len(req.Ops))
	for i, op := range req.Ops {
		res, err := a.multiOp(op)
		if err != nil {
			a.rollback()
			return failedMulti(len(req.Ops), i, errCode(err)), nil
		}
		results = append(results, res)
	}
	a.undo = nil
	return &jute.MultiResponse{Results: results}, nil
}

// multiDecodes reports whether ZooKeeper's MultiOperationRecord accepts a
// multi's ops. It refuses to mix reads (getData, getChildren) into a
// transaction, and a create, create2 or createContainer whose flags are no
// CreateMode or a TTL mode (CreateOptions checks the TTL, which these
// opcodes do not carry).
func multiDecodes(req *jute.MultiRequest) bool {
	for _, op := range req.Ops {
		switch op.Type {
		case jute.OpGetData, jute.OpGetChildren:
			return false
		case jute.OpCreate, jute.OpCreate2, jute.OpCreateContainer:
			cr, ok := op.Req.(*jute.CreateRequest)
			if !ok {
				return false
			}
			if _, err := parseFlags(cr.Flags); err != nil || cr.Flags == jute.FlagPersistentTTL || cr.Flags == jute.FlagPersistentSequentialTTL {
				return false
			}
		}
	}
	return true
}

// multiCreateOp is the opcode under which ZooKeeper (3.9) applies a
// create-family op of a multi: its MultiOperationRecord rebuilds each with
// Op.create, whose opcode follows the flags before the wire's. CONTAINER
// flags make a createContainer whatever the opcode; a createTTL without
// TTL flags becomes a plain create (its TTL dropped); otherwise the wire's
// opcode stays, so create answers with the path alone and create2,
// createContainer and createTTL with a Stat.
func multiCreateOp(wire jute.Op, flags int32) jute.Op {
	switch {
	case flags == jute.FlagContainer:
		return jute.OpCreateContainer
	case wire == jute.OpCreateTTL && flags != jute.FlagPersistentTTL && flags != jute.FlagPersistentSequentialTTL:
		return jute.OpCreate
	}
	return wire
}

// multiOp applies one op of a multi.
func (a *applier) multiOp(op jute.MultiOp) (jute.MultiResult, error) {
	switch op.Type {
	case jute.OpCreate, jute.OpCreate2, jute.OpCreateContainer, jute.OpCreateTTL:
		req, ok := op.Req.(*jute.CreateRequest)
		if !ok {
			return jute.MultiResult{}, jute.ErrMarshallingError
		}
		eff := multiCreateOp(op.Type, req.Flags)
		resp, err := a.create(eff, req)
		if err != nil {
			return jute.MultiResult{}, err
		}
		if eff == jute.OpCreate {
			return jute.MultiResult{Type: jute.OpCreate, Resp: resp}, nil
		}
		return jute.MultiResult{Type: jute.OpCreate2, Resp: resp}, nil
	case jute.OpDelete, jute.OpCheck:
		req, ok := op.Req.(*jute.PathVersionRequest)
		if !ok {
			return jute.MultiResult{}, jute.ErrMarshallingError
		}
		var err error
		if op.Type == jute.OpDelete {
			err = a.delete(req)
		} else {
			err = a.check(req)
		}
		return jute.MultiResult{Type: op.Type}, err
	case jute.OpSetData:
		req, ok := op.Req.(*jute.SetDataRequest)
		if !ok {
			return jute.MultiResult{}, jute.ErrMarshallingError
		}
		resp, err := a.setData(req)
		return jute.MultiResult{Type: jute.OpSetData, Resp: resp}, err
	}
	return jute.MultiResult{}, jute.ErrUnimplemented
}

// failedMulti builds the ErrorResults of a multi whose op failed failed with code.
func failedMulti(n, failed int, code jute.ErrCode) *jute.MultiResponse {
	out := make([]jute.MultiResult, n)
	for i := range out {
		out[i].Type = jute.OpError
		switch {
		case i < failed:
			out[i].Err = jute.OK
		case i == failed:
			out[i].Err = code
		default:
			out[i].Err = jute.ErrRuntimeInconsistency
		}
	}
	return &jute.MultiResponse{Results: out}
}
