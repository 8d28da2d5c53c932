package audit

import (
	"strconv"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// Client is who made an audited write: its session, its identities in
// ZooKeeper's order (acl.IdentityOrder) and its address.
type Client struct {
	Session int64
	Ids     []jute.Id
	IP      string
}

// Audited reports whether ZooKeeper audits a request of type op (createTTL
// outside a multi is not, in ZooKeeper 3.8). Reads are not audited.
func Audited(op jute.Op) bool {
	switch op {
	case jute.OpCreate, jute.OpCreate2, jute.OpCreateContainer, jute.OpDelete, jute.OpSetData,
		jute.OpSetACL, jute.OpMulti, jute.OpReconfig:
		return true
	}
	return false
}

// LogWrite logs the outcome of a client's write of type op (req is its
// request body, res its result) as ZooKeeper's FinalRequestProcessor logs
// it through its Slf4jAuditLogger: one event per write, one per
// operation of a successful multi, a single failure for a failed one.
func LogWrite(log *zap.Logger, who Client, op jute.Op, req []byte, res *znode.Result) {
	emit := func(op, path, typ, aclText string, ok bool) {
		Log(log, Event{Session: "0x" + strconv.FormatUint(uint64(who.Session), 16), User: Users(who.Ids),
			IP: who.IP, Operation: op, Znode: path, ZnodeType: typ, ACL: aclText, Result: Result(ok)})
	}
	ok := res.Err == jute.OK
	switch op {
	case jute.OpCreate, jute.OpCreate2, jute.OpCreateContainer:
		var r jute.CreateRequest
		_ = jute.Unmarshal(req, &r)
		path := r.Path
		if ok {
			path = createdPath(res.Resp, path)
		}
		emit("create", path, CreateMode(r.Flags), "", ok)
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
		emit("setAcl", r.Path, "", ACLString(r.ACL), ok)
	case jute.OpReconfig:
		emit("reconfig", "", "", "", ok)
	case jute.OpMulti:
		logMulti(emit, req, res, ok)
	}
}

// logMulti emits a multi's events: a single failure unless every
// operation succeeded, else one event per create, delete and setData.
func logMulti(emit func(op, path, typ, aclText string, ok bool), req []byte, res *znode.Result, ok bool) {
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
				modes[q.Path] = CreateMode(q.Flags)
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
