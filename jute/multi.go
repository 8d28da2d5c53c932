package jute

import "fmt"

// MultiHeader precedes each op of a multi request or response; a header with
// Done set (type -1, err -1) ends the sequence.
type MultiHeader struct {
	Type Op
	Done bool
	Err  ErrCode
}

// Encode implements Record.
func (x *MultiHeader) Encode(w *Writer) { w.Int(int32(x.Type)); w.Bool(x.Done); w.Int(int32(x.Err)) }

// Decode implements Record.
func (x *MultiHeader) Decode(r *Reader) error {
	x.Type = Op(r.Int())
	x.Done = r.Bool()
	x.Err = ErrCode(r.Int())
	return r.Err()
}

var multiEnd = MultiHeader{Type: -1, Done: true, Err: -1}

// MultiOp is one operation of a multi or multiRead request. Req is one of
// *CreateRequest (create, create2, createContainer, createTTL),
// *PathVersionRequest (delete, check), *SetDataRequest (setData) or
// *PathWatchRequest (getData, getChildren in multiRead).
type MultiOp struct {
	Type Op
	Req  Record
}

// MultiRequest is the body of multi (14) and multiRead (22).
type MultiRequest struct {
	Ops []MultiOp
}

// maxMultiOps bounds the op count so a hostile frame cannot make the decoder
// grow a huge slice; each op takes at least 13 bytes on the wire, so a frame
// under jute.maxbuffer holds far fewer.
const maxMultiOps = DefaultMaxBuffer / 13

// Encode implements Record.
func (x *MultiRequest) Encode(w *Writer) {
	for _, op := range x.Ops {
		h := MultiHeader{Type: op.Type, Err: -1}
		h.Encode(w)
		op.Req.Encode(w)
	}
	multiEnd.Encode(w)
}

// newMultiRequestBody returns an empty request record for a multi op type.
func newMultiRequestBody(t Op) (Record, error) {
	switch t {
	case OpCreate, OpCreate2, OpCreateContainer:
		return &CreateRequest{}, nil
	case OpCreateTTL:
		return &CreateRequest{HasTTL: true}, nil
	case OpDelete, OpCheck:
		return &PathVersionRequest{}, nil
	case OpSetData:
		return &SetDataRequest{}, nil
	case OpGetData, OpGetChildren:
		return &PathWatchRequest{}, nil
	}
	return nil, fmt.Errorf("%w: multi op type %d", ErrMalformed, t)
}

// Decode implements Record.
func (x *MultiRequest) Decode(r *Reader) error {
	x.Ops = x.Ops[:0]
	for {
		var h MultiHeader
		if err := h.Decode(r); err != nil {
			return err
		}
		if h.Done {
			return nil
		}
		if len(x.Ops) >= maxMultiOps {
			return fmt.Errorf("%w: too many multi ops", ErrMalformed)
		}
		body, err := newMultiRequestBody(h.Type)
		if err != nil {
			return err
		}
		if err := body.Decode(r); err != nil {
			return err
		}
		x.Ops = append(x.Ops, MultiOp{Type: h.Type, Req: body})
	}
}

// MultiResult is one result of a multi or multiRead reply. For an error
// result Type is OpError and Err holds the code; Resp is nil for delete,
// check and errors, otherwise *PathRequest (create), *Create2Response
// (create2 and friends, Type 15), *StatResponse (setData), *GetDataResponse
// or *StringsResponse (multiRead).
type MultiResult struct {
	Type Op
	Err  ErrCode
	Resp Record
}

// MultiResponse is the body of a multi or multiRead reply.
type MultiResponse struct {
	Results []MultiResult
}

// Encode implements Record.
func (x *MultiResponse) Encode(w *Writer) {
	for _, res := range x.Results {
		h := MultiHeader{Type: res.Type, Err: res.Err}
		if res.Type != OpError {
			h.Err = OK
		}
		h.Encode(w)
		switch {
		case res.Type == OpError:
			w.Int(int32(res.Err))
		case res.Resp != nil:
			res.Resp.Encode(w)
		}
	}
	multiEnd.Encode(w)
}

// Decode implements Record.
func (x *MultiResponse) Decode(r *Reader) error {
	x.Results = x.Results[:0]
	for {
		var h MultiHeader
		if err := h.Decode(r); err != nil {
			return err
		}
		if h.Done {
			return nil
		}
		if len(x.Results) >= maxMultiOps {
			return fmt.Errorf("%w: too many multi results", ErrMalformed)
		}
		res := MultiResult{Type: h.Type, Err: h.Err}
		switch h.Type {
		case OpError:
			res.Err = ErrCode(r.Int())
		case OpCreate:
			res.Resp = &PathRequest{}
		case OpCreate2:
			res.Resp = &Create2Response{}
		case OpSetData:
			res.Resp = &StatResponse{}
		case OpGetData:
			res.Resp = &GetDataResponse{}
		case OpGetChildren:
			res.Resp = &StringsResponse{}
		case OpDelete, OpCheck:
		default:
			return fmt.Errorf("%w: multi result type %d", ErrMalformed, h.Type)
		}
		if res.Resp != nil {
			if err := res.Resp.Decode(r); err != nil {
				return err
			}
		}
		if err := r.Err(); err != nil {
			return err
		}
		x.Results = append(x.Results, res)
	}
}
