package importer

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/zkraft/zkraft/internal/zookeeper/datadir"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// replayer is the identity transactions are replayed as: ZooKeeper
// checked their permissions when it logged them.
var replayer = []jute.Id{{Scheme: "super", ID: "importer"}}

// errSkip marks a logged transaction that changes nothing here: an error
// transaction (a failed request ZooKeeper logged for its zxid).
var errSkip = fmt.Errorf("importer: nothing to replay")

// stepKind says which of ZooKeeper's replay rules for a parent's child
// counters a step follows (see replayStep).
type stepKind uint8

const (
	stepOther  stepKind = iota
	stepCreate          // any create: parentCVersion is the logged one
	stepDelete          // a delete or deleteContainer of path
	stepClose           // a closeSession: paths is its logged paths2Delete
	stepSetACL          // a setACL: acl and version are the logged ones
)

// step is one replayed change: a zkraft transaction and what ZooKeeper's
// replay needs besides (a create's logged parentCVersion, a closed
// session's logged ephemerals).
type step struct {
	txn            *znode.Txn
	kind           stepKind
	path           string
	parentCVersion int32
	// repair: a plain create that finds its node raises the parent's
	// counters (DataTree.processTxn's setCversionPzxid).
	repair bool
	paths  []string
	// acl is a create's or setACL's logged ACL, version a setACL's logged
	// aversion: ZooKeeper's replay sets them where a live one would fail
	// (see danglingACLs.settle).
	acl     []jute.ACL
	version int32
}

// convert turns one logged ZooKeeper transaction into the zkraft
// transactions that replay it: one, or one per operation of a multi,
// which ZooKeeper's replay applies one by one too (a fuzzy snapshot may
// hold some of a multi's changes and not others).
func convert(t datadir.Txn) ([]step, error) {
	txn := &znode.Txn{Type: t.Type, Session: t.ClientID, Time: t.Time, Ids: replayer}
	r := jute.NewReader(t.Body)
	switch t.Type {
	case jute.OpCreateSession:
		txn.Timeout = r.Int()
		txn.Passwd = Passwd(t.ClientID)
	case jute.OpCloseSession:
		// Its paths2Delete (ZooKeeper 3.6 and later log them) are the
		// session's ephemerals; ZooKeeper's replay deletes them by path.
		var paths []string
		if len(t.Body) > 0 {
			n, _ := r.Count(4)
			paths = make([]string, 0, n)
			for i := 0; i < n && r.Err() == nil; i++ {
				paths = append(paths, r.String())
			}
		}
		if err := r.Err(); err != nil {
			return nil, fmt.Errorf("importer: zxid %#x (closeSession): %w", t.Zxid, err)
		}
		return []step{{txn: txn, kind: stepClose, paths: paths}}, nil
	case jute.OpError:
		return nil, errSkip
	case jute.OpReconfig:
		return convertReconfig(t, r)
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
		return nil, fmt.Errorf("importer: zxid %#x (type %d): %w", t.Zxid, t.Type, err)
	}
	return []step{{txn: txn}}, nil
}

// convertOp reads the record of a create, delete, setData, setACL or check
// transaction as the request that has the same effect. A setData or
// setACL expects the version before the logged one, so a change the
// snapshot already holds fails as BadVersion instead of counting twice
// (ZooKeeper's replay sets the logged version, to the same end). A check
// changes nothing: a step without a transaction.
func convertOp(t datadir.Txn, op jute.Op, r *jute.Reader) (step, error) {
	var req jute.Record
	var st step
	switch op {
	case jute.OpCreate, jute.OpCreate2:
		c := &jute.CreateRequest{Path: r.String(), Data: r.Buffer(), ACL: jute.ReadACLs(r)}
		if r.Bool() {
			c.Flags = jute.FlagEphemeral
		}
		// ZooKeeper's replay sets the parent's cversion to the logged one,
		// never lower, where a live create adds one (replayStep).
		st = step{kind: stepCreate, path: c.Path, parentCVersion: r.Int(), repair: op == jute.OpCreate, acl: c.ACL}
		req = c
	case jute.OpCreateContainer:
		c := &jute.CreateRequest{Path: r.String(), Data: r.Buffer(), ACL: jute.ReadACLs(r), Flags: jute.FlagContainer}
		st = step{kind: stepCreate, path: c.Path, parentCVersion: r.Int(), acl: c.ACL}
		req = c
	case jute.OpCreateTTL:
		c := &jute.CreateRequest{Path: r.String(), Data: r.Buffer(), ACL: jute.ReadACLs(r), Flags: jute.FlagPersistentTTL, HasTTL: true}
		st = step{kind: stepCreate, path: c.Path, parentCVersion: r.Int(), acl: c.ACL}
		c.TTL = r.Long()
		req = c
	case jute.OpDelete:
		d := &jute.PathVersionRequest{Path: r.String(), Version: -1}
		st = step{kind: stepDelete, path: d.Path}
		req = d
	case jute.OpDeleteContainer:
		p := r.String()
		return step{txn: znode.NewDeleteContainerTxn(p, t.Time), kind: stepDelete, path: p}, r.Err()
	case jute.OpSetData:
		req = &jute.SetDataRequest{Path: r.String(), Data: r.Buffer(), Version: r.Int() - 1}
	case jute.OpSetACL:
		a := &jute.SetACLRequest{Path: r.String(), ACL: jute.ReadACLs(r), Version: r.Int() - 1}
		st = step{kind: stepSetACL, path: a.Path, acl: a.ACL, version: a.Version + 1}
		req = a
	case jute.OpCheck:
		return step{}, nil
	default:
		return step{}, fmt.Errorf("importer: zxid %#x: transaction type %d is not replayed", t.Zxid, op)
	}
	if err := r.Err(); err != nil {
		return step{}, fmt.Errorf("importer: zxid %#x (type %d): %w", t.Zxid, op, err)
	}
	st.txn = &znode.Txn{Type: op, Session: t.ClientID, Time: t.Time, Ids: replayer, Req: jute.Marshal(req)}
	return st, nil
}

// convertReconfig reads a reconfig's SetDataTxn {path, data, version}:
// ZooKeeper's new configuration for /zookeeper/config, its "version="
// line the transaction's zxid in hex (PrepRequestProcessor sets the
// configuration's version to it). zkraft's reconfig transaction takes the
// membership lines and adds that line itself, so the node ends as
// ZooKeeper's: the same data, version -1, mzxid the zxid.
func convertReconfig(t datadir.Txn, r *jute.Reader) ([]step, error) {
	path, data := r.String(), r.Buffer()
	r.Int() // always -1
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("importer: zxid %#x (reconfig): %w", t.Zxid, err)
	}
	version := "version=" + strconv.FormatInt(t.Zxid, 16)
	lines, ok := bytes.CutSuffix(data, []byte(version))
	if path != znode.ConfigPath || !ok || (len(lines) > 0 && lines[len(lines)-1] != '\n') {
		return nil, fmt.Errorf("importer: zxid %#x: a reconfig of %q to %q, not a configuration of %s", t.Zxid, path, data, version)
	}
	txn := &znode.Txn{Type: jute.OpReconfig, Session: t.ClientID, Time: t.Time, Ids: replayer, Req: lines}
	return []step{{txn: txn}}, nil
}

// convertMulti reads a MultiTxn {vector<Txn {type, data}>}. A failed
// multi is logged with an error transaction in every slot and is skipped.
func convertMulti(t datadir.Txn, r *jute.Reader) ([]step, error) {
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
		return nil, fmt.Errorf("importer: zxid %#x (multi): %w", t.Zxid, err)
	}
	return out, nil
}
