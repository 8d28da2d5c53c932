package znode

import (
	"fmt"

	"github.com/zkraft/zkraft/acl"
	"github.com/zkraft/zkraft/jute"
)

// MaxTTL is the largest TTL a TTL node may have, in ms (2^40-1).
const MaxTTL = 1<<40 - 1

// createMode is a decoded create flag (CreateMode).
type createMode struct {
	ephemeral, sequential, container, ttl bool
}

// parseFlags is CreateMode.fromFlag: unknown flags are BadArguments.
func parseFlags(flags int32) (createMode, error) {
	switch flags {
	case jute.FlagPersistent:
		return createMode{}, nil
	case jute.FlagEphemeral:
		return createMode{ephemeral: true}, nil
	case jute.FlagPersistentSequential:
		return createMode{sequential: true}, nil
	case jute.FlagEphemeralSequential:
		return createMode{ephemeral: true, sequential: true}, nil
	case jute.FlagContainer:
		return createMode{container: true}, nil
	case jute.FlagPersistentTTL:
		return createMode{ttl: true}, nil
	case jute.FlagPersistentSequentialTTL:
		return createMode{ttl: true, sequential: true}, nil
	}
	return createMode{}, jute.ErrBadArguments
}

// create applies create, create2, createContainer and createTTL with
// ZooKeeper's checks in PrepRequestProcessor's order: flags, TTL, session,
// path shape, ACL, parent, CREATE permission, full path, existence,
// ephemeral parent, quota. The ACL is validated in its place (one linear
// pass that decides InvalidACL); the work of fixing it up (duplicates,
// "auth" expansion, a copy) waits until every check has passed, so a
// failing create costs no more than that pass.
func (a *applier) create(op jute.Op, req *jute.CreateRequest) (jute.Record, error) {
	mode, err := parseFlags(req.Flags)
	if err != nil {
		return nil, err
	}
	ttl := int64(-1)
	if op == jute.OpCreateTTL {
		ttl = req.TTL
	}
	if mode.ttl && !a.t.opts.ExtendedTypes {
		return nil, jute.ErrUnimplemented
	}
	if mode.ttl && (ttl <= 0 || ttl > MaxTTL) || !mode.ttl && ttl >= 0 {
		return nil, jute.ErrBadArguments
	}
	if op == jute.OpCreateTTL && !mode.ttl {
		// ZooKeeper would log a TTL txn with ttl -1 and fail to apply it.
		return nil, jute.ErrBadArguments
	}
	if err := a.checkSession(); err != nil {
		return nil, err
	}
	parentPath, err := parentForCreate(req.Path)
	if err != nil {
		return nil, err
	}
	if err := acl.Validate(req.ACL, a.ids); err != nil {
		return nil, jute.ErrInvalidACL
	}
	parent := a.t.lookup(parentPath)
	if parent == nil {
		return nil, jute.ErrNoNode
	}
	if err := a.checkPerm(a.t.aclOf(parent), jute.PermCreate); err != nil {
		return nil, err
	}
	path := req.Path
	if mode.sequential {
		path += fmt.Sprintf("%010d", parent.cversion())
	}
	if err := ValidatePath(path); err != nil {
		return nil, err
	}
	_, name, _ := splitPath(path)
	if path == RootPath || parent.child(name) != nil { // "/" splits into "" and ""
		return nil, jute.ErrNodeExists
	}
	if parent.kind() == kindEphemeral {
		return nil, jute.ErrNoChildrenForEphem
	}
	if err := a.t.checkQuota(path, 1, int64(len(req.Data))); err != nil {
		return nil, err
	}
	list, err := acl.Fixup(req.ACL, a.ids)
	if err != nil {
		return nil, jute.ErrInvalidACL // Validate passed: cannot happen
	}
	ref, ok := a.t.acls.acquire(list)
	if !ok {
		return nil, jute.ErrSystemError
	}

	n := &node{
		data:  req.Data,
		czxid: a.zxid, mzxid: a.zxid, // pzxid = czxid while ext is nil
		ctime: a.txn.Time, mtime: a.txn.Time,
	}
	n.setACL(ref)
	switch {
	case op == jute.OpCreateContainer:
		n.setKind(kindContainer)
	case op == jute.OpCreateTTL:
		n.setKind(kindTTL)
		n.owner = ttl
	case mode.ephemeral:
		n.setKind(kindEphemeral)
		n.owner = a.txn.Session
	}
	st := n.stat() // before quota bookkeeping may rewrite a stats node's data
	cversion := parent.cversion() + 1
	if err := a.insert(path, parent, name, n); err != nil {
		a.t.acls.release(ref) // nothing changed: insert checks first
		return nil, err
	}
	a.setChildMeta(parent, cversion, a.zxid)
	a.fire(path, jute.EventNodeCreated, a.t.aclOf(n))
	a.fire(eventPath(parentPath), jute.EventNodeChildrenChanged, a.t.aclOf(parent))
	if a.res != nil && !a.multi { // the reply lives in the Result (see setData)
		if op == jute.OpCreate {
			a.res.path.Path = path
			return &a.res.path, nil
		}
		a.res.created = jute.Create2Response{Path: path, Stat: st}
		return &a.res.created, nil
	}
	if op == jute.OpCreate {
		return &jute.PathRequest{Path: path}, nil
	}
	return &jute.Create2Response{Path: path, Stat: st}, nil
}
