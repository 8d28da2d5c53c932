package zkimport

import (
	"fmt"

	"github.com/zkraft/zkraft/internal/zkdata"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// replayer is the identity transactions are replayed as: ZooKeeper
// checked their permissions when it logged them.
var replayer = []jute.Id{{Scheme: "super", ID: "zkimport"}}

// errSkip marks a logged transaction that changes nothing here: an error
// transaction (a failed request ZooKeeper logged for its zxid) or a
// reconfig, whose membership is zkraft's own now.
var errSkip = fmt.Errorf("zkimport: nothing to replay")

// parentCVersion is a logged create's parentCVersion, for the repair of a
// create a fuzzy snapshot already holds (Tree.SettleFuzzyCreate).
func parentCVersion(t zkdata.Txn) (path string, cversion int32, ok bool) {
	if t.Type != jute.OpCreate {
		return "", 0, false // ZooKeeper repairs plain creates only
	}
	r := jute.NewReader(t.Body)
	path = r.String()
	r.Buffer()
	jute.ReadACLs(r)
	r.Bool()
	cversion = r.Int()
	return path, cversion, r.Err() == nil
}

// convert turns one logged ZooKeeper transaction into a zkraft Txn.
func convert(t zkdata.Txn) (*znode.Txn, error) {
	txn := &znode.Txn{Type: t.Type, Session: t.ClientID, Time: t.Time, Ids: replayer}
	r := jute.NewReader(t.Body)
	switch t.Type {
	case jute.OpCreateSession:
		txn.Timeout = r.Int()
		txn.Passwd = Passwd(t.ClientID)
	case jute.OpCloseSession:
		// Its paths2Delete are the session's ephemerals, which the tree
		// deletes itself.
	case jute.OpError, jute.OpReconfig:
		return nil, errSkip
	case jute.OpMulti:
		req, err := convertMulti(r)
		if err != nil {
			return nil, err
		}
		txn.Req = jute.Marshal(req)
	default:
		op, rec, err := convertOp(t.Type, r)
		if err != nil {
			return nil, err
		}
		txn.Type = op
		if op == jute.OpDeleteContainer {
			return znode.NewDeleteContainerTxn(rec.(*jute.PathVersionRequest).Path, t.Time), nil
		}
		txn.Req = jute.Marshal(rec)
	}
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("zkimport: zxid %#x (type %d): %w", t.Zxid, t.Type, err)
	}
	return txn, nil
}

// convertOp reads the record of a create, delete, setData, setACL or
// check transaction as the client request that has the same effect.
// Versions become -1: the logged ones are the results, which replay
// reproduces.
func convertOp(op jute.Op, r *jute.Reader) (jute.Op, jute.Record, error) {
	switch op {
	case jute.OpCreate, jute.OpCreate2:
		req := &jute.CreateRequest{Path: r.String(), Data: r.Buffer(), ACL: jute.ReadACLs(r)}
		if r.Bool() {
			req.Flags = jute.FlagEphemeral
		}
		r.Int() // parentCVersion: the tree derives the same
		return op, req, nil
	case jute.OpCreateContainer:
		req := &jute.CreateRequest{Path: r.String(), Data: r.Buffer(), ACL: jute.ReadACLs(r), Flags: jute.FlagContainer}
		r.Int()
		return op, req, nil
	case jute.OpCreateTTL:
		req := &jute.CreateRequest{Path: r.String(), Data: r.Buffer(), ACL: jute.ReadACLs(r), Flags: jute.FlagPersistentTTL, HasTTL: true}
		r.Int()
		req.TTL = r.Long()
		return op, req, nil
	case jute.OpDelete, jute.OpDeleteContainer:
		return op, &jute.PathVersionRequest{Path: r.String(), Version: -1}, nil
	case jute.OpSetData:
		return op, &jute.SetDataRequest{Path: r.String(), Data: r.Buffer(), Version: -1}, nil
	case jute.OpSetACL:
		return op, &jute.SetACLRequest{Path: r.String(), ACL: jute.ReadACLs(r), Version: -1}, nil
	case jute.OpCheck:
		return op, &jute.PathVersionRequest{Path: r.String(), Version: -1}, nil
	}
	return 0, nil, fmt.Errorf("zkimport: transaction type %d is not replayed", op)
}

// convertMulti reads a MultiTxn {vector<Txn {type, data}>}. A failed
// multi is logged with an error transaction in every slot and is skipped.
func convertMulti(r *jute.Reader) (*jute.MultiRequest, error) {
	n, _ := r.Count(8)
	req := &jute.MultiRequest{}
	for i := 0; i < n && r.Err() == nil; i++ {
		typ := jute.Op(r.Int())
		body := r.Buffer()
		if typ == jute.OpError {
			return nil, errSkip
		}
		sub := jute.NewReader(body)
		op, rec, err := convertOp(typ, sub)
		if err != nil {
			return nil, err
		}
		if err := sub.Err(); err != nil {
			return nil, fmt.Errorf("zkimport: multi op %d: %w", i, err)
		}
		req.Ops = append(req.Ops, jute.MultiOp{Type: op, Req: rec})
	}
	return req, r.Err()
}
