package znode

import (
	"errors"
	"fmt"
	"runtime/debug"

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

// Result is the outcome of applying one transaction. Use it through the
// pointer Apply returns: Resp and Events may point into the Result itself.
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
	// Fault is set when applying broke one of the tree's invariants (a
	// bug, or an entry this build cannot apply): the tree may now differ
	// from other members' and must not be trusted. Err is SystemError
	// then. The caller must stop the member rather than answer or go on.
	Fault error

	// evBuf holds a write's first events, and stat, path and created the
	// reply of a setData, create or create2, so that the common write
	// allocates the Result and nothing else for them.
	evBuf   [2]Event
	stat    jute.StatResponse
	path    jute.PathRequest
	created jute.Create2Response
}

// applier carries one transaction's context. In a multi it records an undo
// action for every mutation so a failing op can roll the whole multi back.
type applier struct {
	t      *Tree
	txn    *Txn
	zxid   int64
	res    *Result
	multi  bool
	ids    []jute.Id // the caller's identities (callerIds)
	undo   []func()
	events []Event
	r      jute.Reader // decodes the request body
}

// Apply applies txn at zxid and returns its result. It is deterministic: it
// never reads the clock or randomness, decides permissions from the
// caller's identities (txn.Ids, or the session's set txn.IdsKey names) and
// applies with txn.Options when stamped, else the tree's own.
// A malformed request body yields jute.ErrMarshallingError, an unknown type
// jute.ErrUnimplemented. Apply never panics: an internal failure (a panic
// while applying) is reported as jute.ErrSystemError with Result.Fault set,
// and the caller must stop using the tree.
func (t *Tree) Apply(txn *Txn, zxid int64) (res *Result) {
	res = &Result{Zxid: zxid}
	t.lastZxid = zxid
	if o, ok := txn.Options.Options(); ok && o != t.opts {
		// The leader's options decide the write (Txn.Options); the
		// member's own go on deciding its reads.
		own := t.opts
		t.opts = o
		defer func() { t.opts = own }()
	}
	// The tree's own applier: applies never overlap (the caller holds the
	// tree exclusively), and a fresh one per write would be garbage.
	a := &t.applier
	*a = applier{t: t, txn: txn, zxid: zxid, res: res, events: res.evBuf[:0]}
	defer func() {
		if r := recover(); r != nil {
			a.rollback()
			res.Err, res.Resp, res.Events = jute.ErrSystemError, nil, nil
			res.Fault = fmt.Errorf("znode: apply %v at zxid %#x: %v\n%s", txn.Type, zxid, r, debug.Stack())
		}
		*a = applier{} // keep nothing of this write alive
	}()
	resp, err := a.apply()
	if err != nil {
		res.Err = errCode(err)
		return res
	}
	res.Resp = resp
	if len(a.events) > 0 {
		res.Events = a.events
	}
	return res
}

// errCode extracts the ZooKeeper code of an error returned by an op.
func errCode(err error) jute.ErrCode {
	if c, ok := errors.AsType[jute.ErrCode](err); ok {
		return c
	}
	return jute.ErrSystemError
}

// apply dispatches on the transaction type.
func (a *applier) apply() (jute.Record, error) {
	ids, err := a.callerIds()
	if err != nil {
		return nil, err
	}
	a.ids = ids
	switch a.txn.Type {
	case OpSetIdentities:
		return nil, a.setIdentities()
	case jute.OpCreateSession:
		return nil, a.createSession()
	case jute.OpCloseSession:
		return nil, a.closeSession()
	case jute.OpDeleteContainer:
		req := &jute.PathRequest{}
		if err := a.decode(req); err != nil {
			return nil, err
		}
		return nil, a.deleteContainer(req.Path)
	case jute.OpReconfig:
		return a.reconfig()
	case jute.OpCreate, jute.OpCreate2, jute.OpCreateContainer, jute.OpCreateTTL:
		req := jute.CreateRequest{HasTTL: a.txn.Type == jute.OpCreateTTL}
		if req.Decode(a.reader()) != nil {
			return nil, jute.ErrMarshallingError
		}
		return a.create(a.txn.Type, &req)
	case jute.OpDelete:
		var req jute.PathVersionRequest
		if req.Decode(a.reader()) != nil {
			return nil, jute.ErrMarshallingError
		}
		return nil, a.delete(&req)
	case jute.OpSetData:
		var req jute.SetDataRequest // on the stack: decoded directly, not through a.decode's interface
		if req.Decode(a.reader()) != nil {
			return nil, jute.ErrMarshallingError
		}
		return a.setData(&req)
	case jute.OpSetACL:
		req := &jute.SetACLRequest{}
		if err := a.decode(req); err != nil {
			return nil, err
		}
		return a.setACL(req)
	case jute.OpMulti:
		req := &jute.MultiRequest{}
		if err := a.decode(req); err != nil {
			return nil, err
		}
		return a.applyMulti(req)
	}
	return nil, jute.ErrUnimplemented
}

// decode decodes the request body into rec; trailing bytes are ignored, as
// ZooKeeper's deserializer ignores them.
func (a *applier) decode(rec jute.Record) error {
	if rec.Decode(a.reader()) != nil {
		return jute.ErrMarshallingError
	}
	return nil
}

// reader returns the applier's reader, set to the start of the request body.
func (a *applier) reader() *jute.Reader {
	a.r.Reset(a.txn.Req)
	return &a.r
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
	if !a.t.Permits(list, perm, a.ids) {
		return jute.ErrNoAuth
	}
	return nil
}

// fire queues a watch event.
func (a *applier) fire(path string, typ jute.EventType, list []jute.ACL) {
	if a.t.opts.SkipACL {
		list = nil // every watcher may read
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
