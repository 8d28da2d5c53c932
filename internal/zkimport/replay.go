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

// step is one replayed change: a zkraft transaction and, for a plain
// create, the logged parentCVersion for ZooKeeper's repair of a create
// that a fuzzy snapshot already holds (Tree.SettleFuzzyCreate).
type step struct {
	txn            *znode.Txn
	path           string
	parentCVersion int32
	repair         bool
}

// convert turns one logged ZooKeeper transaction into the zkraft
// transactions that replay it: one, or one per operation of a multi,
// which ZooKeeper's replay applies one by one too (a fuzzy snapshot may
// hold some of a multi's changes and not others).
func convert(t zkdata.Txn) ([]step, error) {
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
		return convertMulti(t, r)
	default:
		sub, err := convertOp(t, t.Type, r)
		if err != nil || sub.txn == nil {
			return nil, err
		}
		return []step{sub}, nil
	}
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("zkimport: zxid %#x (type %d): %w", t.Zxid, t.Type, err)
	}
	return []step{{txn: txn}}, nil
}

// convertOp reads the record of a create, delete, setData, setACL or check
// transaction as the request that has the same effect. A setData or
// setACL expects the version before the logged one, so a change the
// snapshot already holds fails as BadVersion instead of counting twice
// (ZooKeeper's replay sets the logged version, to the same end). A check
// changes nothing: a step without a transaction.
func convertOp(t zkdata.Txn, op jute.Op, r *jute.Reader) (step, error) {
	var req jute.Record
	var st step
	switch op {
	case jute.OpCreate, jute.OpCreate2:
		c := &jute.CreateRequest{Path: r.String(), Data: r.Buffer(), ACL: jute.ReadACLs(r)}
		if r.Bool() {
			c.Flags = jute.FlagEphemeral
		}
		// The tree derives the same parentCVersion; ZooKeeper uses the
		// logged one to repair a create the snapshot holds (plain creates only).
		st = step{path: c.Path, parentCVersion: r.Int(), repair: op == jute.OpCreate}
		req = c
	case jute.OpCreateContainer:
		req = &jute.CreateRequest{Path: r.String(), Data: r.Buffer(), ACL: jute.ReadACLs(r), Flags: jute.FlagContainer}
		r.Int()
	case jute.OpCreateTTL:
		c := &jute.CreateRequest{Path: r.String(), Data: r.Buffer(), ACL: jute.ReadACLs(r), Flags: jute.FlagPersistentTTL, HasTTL: true}
		r.Int()
		c.TTL = r.Long()
		req = c
	case jute.OpDelete:
		req = &jute.PathVersionRequest{Path: r.String(), Version: -1}
	case jute.OpDeleteContainer:
		return step{txn: znode.NewDeleteContainerTxn(r.String(), t.Time)}, r.Err()
	case jute.OpSetData:
		req = &jute.SetDataRequest{Path: r.String(), Data: r.Buffer(), Version: r.Int() - 1}
	case jute.OpSetACL:
		req = &jute.SetACLRequest{Path: r.String(), ACL: jute.ReadACLs(r), Version: r.Int() - 1}
	case jute.OpCheck:
		return step{}, nil
	default:
		return step{}, fmt.Errorf("zkimport: zxid %#x: transaction type %d is not replayed", t.Zxid, op)
	}
	if err := r.Err(); err != nil {
		return step{}, fmt.Errorf("zkimport: zxid %#x (type %d): %w", t.Zxid, op, err)
	}
	st.txn = &znode.Txn{Type: op, Session: t.ClientID, Time: t.Time, Ids: replayer, Req: jute.Marshal(req)}
	return st, nil
}

// convertMulti reads a MultiTxn {vector<Txn {type, data}>}. A failed
// multi is logged with an error transaction in every slot and is skipped.
func convertMulti(t zkdata.Txn, r *jute.Reader) ([]step, error) {
	n, _ := r.Count(8)
	var out []step
	for i := 0; i < n && r.Err() == nil; i++ {
		typ := jute.Op(r.Int())
		body := r.Buffer()
		if typ == jute.OpError {
			return nil, errSkip
		}
		sub, err := convertOp(t, typ, jute.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("multi op %d: %w", i, err)
		}
		if sub.txn != nil {
			out = append(out, sub)
		}
	}
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("zkimport: zxid %#x (multi): %w", t.Zxid, err)
	}
	return out, nil
}
