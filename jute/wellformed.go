package jute

// WellFormed reports whether body decodes as op's request body (trailing
// bytes ignored, as ZooKeeper's deserializer ignores them), as decoding the
// record NewRequest returns would. setData, delete and the create family,
// the writes a server checks most, are scanned in place without decoding
// anything into memory; other ops are decoded. An op with no request body
// here is not well formed.
func WellFormed(op Op, body []byte) bool {
	var r Reader
	r.Reset(body)
	switch op {
	case OpSetData:
		r.BufferView() // path: a string's encoding is a buffer's
		r.BufferView() // data
		r.Int()        // version
	case OpDelete:
		r.BufferView() // path
		r.Int()        // version
	case OpCreate, OpCreate2, OpCreateContainer, OpCreateTTL:
		r.BufferView() // path
		r.BufferView() // data
		if n, null := r.Count(12); !null {
			for range n { // ACL: perms, scheme, id
				r.Int()
				r.BufferView()
				r.BufferView()
			}
		}
		r.Int() // flags
		if op == OpCreateTTL {
			r.Long()
		}
	default:
		rec, ok := NewRequest(op)
		return ok && rec.Decode(NewReader(body)) == nil // not r: it would escape for every op
	}
	return r.Err() == nil
}
