package jute

// NewResponse returns an empty reply body record for a successful op, ready
// for Decode (clients, tests, tools), or false for an opcode with no client
// reply. Replies with an error code other than OK carry no body; ops whose
// reply is header-only (delete, ping, closeSession, auth, setWatches,
// checkWatches, removeWatches) return Empty.
func NewResponse(op Op) (Record, bool) {
	switch op {
	case OpCreate, OpSync:
		return &PathRequest{}, true
	case OpCreate2, OpCreateContainer, OpCreateTTL:
		return &Create2Response{}, true
	case OpExists, OpSetData, OpSetACL:
		return &StatResponse{}, true
	case OpGetData, OpReconfig:
		return &GetDataResponse{}, true
	case OpGetACL:
		return &GetACLResponse{}, true
	case OpGetChildren, OpGetEphemerals:
		return &StringsResponse{}, true
	case OpGetChildren2:
		return &GetChildren2Response{}, true
	case OpGetAllChildrenNumber:
		return &IntResponse{}, true
	case OpMulti, OpMultiRead:
		return &MultiResponse{}, true
	case OpAddWatch:
		return &ErrorResponse{}, true
	case OpWhoAmI:
		return &WhoAmIResponse{}, true
	case OpDelete, OpPing, OpCloseSession, OpAuth, OpSetWatches, OpSetWatches2,
		OpCheckWatches, OpRemoveWatches, OpCheck, OpDeleteContainer:
		return Empty{}, true
	}
	return nil, false
}
