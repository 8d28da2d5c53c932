package session

import (
	"strconv"

	"github.com/zkraft/zkraft/acl"
	"github.com/zkraft/zkraft/internal/audit"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// Audit logging (ZooKeeper 3.6+'s audit.enable): every write a client
// makes is logged, once its outcome is known, by the member holding the
// client's connection, as ZooKeeper's FinalRequestProcessor logs it
// through its Slf4jAuditLogger: tab-separated key=value fields (session,
// user, ip, operation, znode, znode_type, acl) ending in result=success or
// failure, at info level (error for a failure). Reads are not logged.

// audit logs the outcome of p's write (req is its request body).
func (p *pendingWrite) audit(res *znode.Result, req []byte) {
	c := p.c
	log := c.srv.audit
	emit := func(op, path, typ, aclText string, ok bool) {
		audit.Log(log, audit.Event{Session: "0x" + strconv.FormatUint(uint64(c.sessionID), 16), User: audit.Users(acl.IdentityOrder(c.Ids())),
			IP: c.remote, Operation: op, Znode: path, ZnodeType: typ, ACL: aclText, Result: audit.Result(ok)})
	}
	ok := res.Err == jute.OK
	switch p.op {
	case jute.OpCreate, jute.OpCreate2, jute.OpCreateContainer:
		var r jute.CreateRequest
		_ = jute.Unmarshal(req, &r)
		path := r.Path
		if ok {
			path = createdPath(res.Resp, path)
		}
		emit("create", path, audit.CreateMode(r.Flags), "", ok)
	case jute.OpDelete:
		var r jute.PathVersionRequest
		_ = jute.Unmarshal(req, &r)
		emit("delete", r.Path, "", "", ok)
	case jute.OpSetData:
		var r jute.SetDataRequest
		_ = jute.Unmarshal(req, &r)
		emit("setData", r.Path, "", "", ok)
	case jute.OpSetACL:
		var r jute.SetACLRequest
		_ = jute.Unmarshal(req, &r)
		emit("setAcl", r.Path, "", audit.ACLString(r.ACL), ok)
	case jute.OpReconfig:
		emit("reconfig", "", "", "", ok)
	case jute.OpMulti:
		var r jute.MultiRequest
		_ = jute.Unmarshal(req, &r)
		mr, _ := res.Resp.(*jute.MultiResponse)
		if !ok || mr == nil {
			emit("multiOperation", "", "", "", false)
			return
		}
		for _, sub := range mr.Results {
			if sub.Type == jute.OpError {
				emit("multiOperation", "", "", "", false)
				return
			}
		}
		// ZooKeeper keys the create modes by the requested path, so a
		// sequential create's mode is not found under its final name.
		modes := map[string]string{}
		paths := make([]string, len(r.Ops))
		for i, op := range r.Ops {
			switch q := op.Req.(type) {
			case *jute.CreateRequest:
				paths[i] = q.Path
				if op.Type != jute.OpCreateTTL {
					modes[q.Path] = audit.CreateMode(q.Flags)
				}
			case *jute.PathVersionRequest:
				paths[i] = q.Path
			case *jute.SetDataRequest:
				paths[i] = q.Path
			}
		}
		for i, sub := range mr.Results {
			if i >= len(paths) {
				break
			}
			switch sub.Type {
			case jute.OpCreate, jute.OpCreate2, jute.OpCreateContainer, jute.OpCreateTTL:
				path := createdPath(sub.Resp, paths[i])
				emit("create", path, modes[path], "", true)
			case jute.OpDelete:
				emit("delete", paths[i], "", "", true)
			case jute.OpSetData:
				emit("setData", paths[i], "", "", true)
			}
		}
	}
}

// audited reports whether ZooKeeper audits a request of type op (createTTL
// outside a multi is not, in ZooKeeper 3.8).
func audited(op jute.Op) bool {
	switch op {
	case jute.OpCreate, jute.OpCreate2, jute.OpCreateContainer, jute.OpDelete, jute.OpSetData,
		jute.OpSetACL, jute.OpMulti, jute.OpReconfig:
		return true
	}
	return false
}

// createdPath is the path a create's response names (a sequential node's
// final name), else requested.
func createdPath(resp jute.Record, requested string) string {
	switch r := resp.(type) {
	case *jute.Create2Response:
		return r.Path
	case *jute.PathRequest:
		return r.Path
	}
	return requested
}
