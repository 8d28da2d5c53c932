package znode

import (
	"github.com/zkraft/zkraft/acl"
	"github.com/zkraft/zkraft/jute"
)

// setData applies setData: session, path, node, WRITE, quota, version.
func (a *applier) setData(req *jute.SetDataRequest) (jute.Record, error) {
	if err := a.checkSession(); err != nil {
		return nil, err
	}
	if err := ValidatePath(req.Path); err != nil {
		return nil, err
	}
	n := a.t.lookup(req.Path)
	if n == nil {
		return nil, jute.ErrNoNode
	}
	if err := a.checkPerm(a.t.aclOf(n), jute.PermWrite); err != nil {
		return nil, err
	}
	if err := a.t.checkQuota(req.Path, 0, int64(len(req.Data)-len(n.data))); err != nil {
		return nil, err
	}
	version, err := checkVersion(n.version, req.Version)
	if err != nil {
		return nil, err
	}
	if err := a.setNodeData(req.Path, n, req.Data, version, a.zxid, a.txn.Time); err != nil {
		return nil, err
	}
	a.fire(req.Path, jute.EventNodeDataChanged, a.t.aclOf(n))
	if a.res != nil && !a.multi {
		// The reply lives in the Result; a multi's replies each need
		// their own.
		a.res.stat.Stat = n.stat()
		return &a.res.stat, nil
	}
	return &jute.StatResponse{Stat: n.stat()}, nil
}

// setACL applies setACL: session, path, ACL validation, node, ADMIN,
// aversion, as PrepRequestProcessor orders them; the ACL's fix-up work
// waits until they have all passed (see create). It fires no watch.
func (a *applier) setACL(req *jute.SetACLRequest) (jute.Record, error) {
	if err := a.checkSession(); err != nil {
		return nil, err
	}
	if err := ValidatePath(req.Path); err != nil {
		return nil, err
	}
	if err := acl.Validate(req.ACL, a.ids); err != nil {
		return nil, jute.ErrInvalidACL
	}
	n := a.t.lookup(req.Path)
	if n == nil {
		return nil, jute.ErrNoNode
	}
	if err := a.checkPerm(a.t.aclOf(n), jute.PermAdmin); err != nil {
		return nil, err
	}
	aversion, err := checkVersion(n.aversion(), req.Version)
	if err != nil {
		return nil, err
	}
	list, err := acl.Fixup(req.ACL, a.ids)
	if err != nil {
		return nil, jute.ErrInvalidACL // Validate passed: cannot happen
	}
	if err := a.setNodeACL(n, list, aversion); err != nil {
		return nil, err
	}
	return &jute.StatResponse{Stat: n.stat()}, nil
}

// check applies a multi's version check: session, path, node, READ, version.
func (a *applier) check(req *jute.PathVersionRequest) error {
	if err := a.checkSession(); err != nil {
		return err
	}
	if err := ValidatePath(req.Path); err != nil {
		return err
	}
	n := a.t.lookup(req.Path)
	if n == nil {
		return jute.ErrNoNode
	}
	if err := a.checkPerm(a.t.aclOf(n), jute.PermRead); err != nil {
		return err
	}
	_, err := checkVersion(n.version, req.Version)
	return err
}
