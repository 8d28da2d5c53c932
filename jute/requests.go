package jute

// Empty is a record with no fields: the body of ping, closeSession and whoAmI
// requests, and of replies that carry only a header.
type Empty struct{}

// Encode implements Record.
func (Empty) Encode(*Writer) {}

// Decode implements Record.
func (Empty) Decode(r *Reader) error { return r.Err() }

// NewRequest returns an empty request body record for op, ready for Decode,
// or false for an opcode that has no client request body here (sasl,
// createSession, notification, error, and unknown opcodes). Records that
// several ops share come preconfigured: createTTL's CreateRequest has HasTTL
// set and setWatches2's SetWatches has V2 set.
func NewRequest(op Op) (Record, bool) {
	switch op {
	case OpCreate, OpCreate2, OpCreateContainer:
		return &CreateRequest{}, true
	case OpCreateTTL:
		return &CreateRequest{HasTTL: true}, true
	case OpDelete, OpCheck:
		return &PathVersionRequest{}, true
	case OpExists, OpGetData, OpGetChildren, OpGetChildren2:
		return &PathWatchRequest{}, true
	case OpSetData:
		return &SetDataRequest{}, true
	case OpGetACL, OpSync, OpGetEphemerals, OpGetAllChildrenNumber, OpDeleteContainer:
		return &PathRequest{}, true
	case OpSetACL:
		return &SetACLRequest{}, true
	case OpMulti, OpMultiRead:
		return &MultiRequest{}, true
	case OpReconfig:
		return &ReconfigRequest{}, true
	case OpCheckWatches, OpRemoveWatches, OpAddWatch:
		return &PathTypeRequest{}, true
	case OpAuth:
		return &AuthPacket{}, true
	case OpSetWatches:
		return &SetWatches{}, true
	case OpSetWatches2:
		return &SetWatches{V2: true}, true
	case OpWhoAmI, OpPing, OpCloseSession:
		return Empty{}, true
	}
	return nil, false
}
