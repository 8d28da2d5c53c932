package znode

import (
	"github.com/zkraft/zkraft/jute"
)

// Event is one watch trigger produced by a transaction.
type Event struct {
	Path string
	Type jute.EventType
	// ACL governs READ for this notification: the node's ACL, the parent's
	// for NodeChildrenChanged, and a deleted node's ACL before deletion.
	ACL []jute.ACL
}

// Result is the outcome of applying one transaction.
type Result struct {
	// Zxid is the transaction's zxid (also on failure: a failed write
	// consumes its zxid, as in ZooKeeper).
	Zxid int64
	// Err goes into ReplyHeader.Err; a failed multi reports OK here and the
	// per-op codes in its MultiResponse.
	Err jute.ErrCode
	// Resp is the reply body when Err is OK; nil for delete, createSession,
	// closeSession and deleteContainer.
	Resp jute.Record
	// Events are the watch triggers in the order ZooKeeper fires them.
	Events []Event
}

// applier carries one transaction's context. In a multi it records an undo
// action for every mutation so a failing op can roll the whole multi back.
type applier struct {
	t      *Tree
	txn    *Txn
	zxid   int64
	multi  bool
	undo   []func()
	events []Event
}

// Apply applies txn at zxid and returns its result. It is deterministic: it
// never reads the clock or randomness, and decides permissions from txn.Ids.
// A malformed request body yields jute.ErrMarshallingError, an unknown type
// jute.ErrUnimplemented. Apply never panics; an internal failure is reported
// as jute.ErrSystemError.
func (t *Tree) Apply(txn *Txn, zxid int64) (res *Result) {
	res = &Result{Zxid: zxid}
	t.lastZxid = zxid
	a := &applier{t: t, txn: txn, zxid: zxid}
	defer func() {
		if r := recover(); r != nil {
			a.rollback()
			res.Err, res.Resp, res.Events = jute.ErrSystemError, nil, nil
		}
	}()
	resp, err := a.apply()
	if err != nil {
		res.Err = errCode(err)
		return res
	}
	res.Resp = resp
	res.Events = a.events
	return res
}

// errCode extracts the ZooKeeper code of an error returned by an op.
func errCode(err error) jute.ErrCode {
	if c, ok := err.(jute.ErrCode); ok {
		return c
	}
	return jute.ErrSystemError
}

// apply dispatches on the transaction type.
func (a *applier) apply() (jute.Record, error) {
	switch a.txn.Type {
	case jute.OpCreateSession:
		return nil, a.createSession()
	case jute.OpCloseSession:
		a.closeSession()
		return nil, nil
	case jute.OpDeleteContainer:
		req := &jute.PathRequest{}
		if err := decodeReq(a.txn.Req, req); err != nil {
			return nil, err
		}
		return nil, a.deleteContainer(req.Path)
	case jute.OpReconfig:
		return a.reconfig()
	case jute.OpCreate, jute.OpCreate2, jute.OpCreateContainer, jute.OpCreateTTL:
		req := &jute.CreateRequest{HasTTL: a.txn.Type == jute.OpCreateTTL}
		if err := decodeReq(a.txn.Req, req); err != nil {
			return nil, err
		}
		return a.create(a.txn.Type, req)
	case jute.OpDelete:
		req := &jute.PathVersionRequest{}
		if err := decodeReq(a.txn.Req, req); err != nil {
			return nil, err
		}
		return nil, a.delete(req)
	case jute.OpSetData:
		req := &jute.SetDataRequest{}
		if err := decodeReq(a.txn.Req, req); err != nil {
			return nil, err
		}
		return a.setData(req)
	case jute.OpSetACL:
		req := &jute.SetACLRequest{}
		if err := decodeReq(a.txn.Req, req); err != nil {
			return nil, err
		}
		return a.setACL(req)
	case jute.OpMulti:
		req := &jute.MultiRequest{}
		if err := decodeReq(a.txn.Req, req); err != nil {
			return nil, err
		}
		return a.applyMulti(req)
	}
	return nil, jute.ErrUnimplemented
}

// decodeReq decodes a request body; trailing bytes are ignored, as
// ZooKeeper's deserializer ignores them.
func decodeReq(b []byte, rec jute.Record) error {
	if rec.Decode(jute.NewReader(b)) != nil {
		return jute.ErrMarshallingError
	}
	return nil
}

// checkSession fails writes of sessions missing from the table.
func (a *applier) checkSession() error {
	if a.t.sessions[a.txn.Session] == nil {
		return jute.ErrSessionExpired
	}
	return nil
}

// checkPerm fails with NoAuth unless the caller holds perm on list.
func (a *applier) checkPerm(list []jute.ACL, perm int32) error {
	if !a.t.Permits(list, perm, a.txn.Ids) {
		return jute.ErrNoAuth
	}
	return nil
}

// fire queues a watch event.
func (a *applier) fire(path string, typ jute.EventType, list []jute.ACL) {
	if a.t.opts.SkipACL {
		list = nil // every watcher may read
	}
	if a.events == nil {
		a.events = make([]Event, 0, 2)
	}
	a.events = append(a.events, Event{Path: path, Type: typ, ACL: list})
}

// onUndo records a rollback action when inside a multi (callers on hot
// paths test a.multi first to avoid allocating the closure).
func (a *applier) onUndo(f func()) {
	if a.multi {
		a.undo = append(a.undo, f)
	}
}

// rollback undoes every recorded mutation, newest first.
func (a *applier) rollback() {
	for i := len(a.undo) - 1; i >= 0; i-- {
		a.undo[i]()
	}
	a.undo = nil
	a.events = nil
}

// checkVersion is ZooKeeper's checkAndIncVersion: -1 matches any version.
// It returns the incremented version (wrapping like a Java int).
func checkVersion(current, expected int32) (int32, error) {
	if expected != -1 && expected != current {
		return 0, jute.ErrBadVersion
	}
	return current + 1, nil
}
