package zkleader

import (
	"github.com/zkraft/zkraft/jute"
)

// Txn is a transaction of the leader's: a TxnHeader's fields and the
// record of its type (CreateTxn, SetDataTxn...), as a transaction log
// and the quorum protocol carry it. No TxnDigest follows (ZooKeeper
// before 3.6, or with digests off).
type Txn struct {
	Session int64 // the TxnHeader's clientId
	Cxid    int32
	Zxid    int64
	Time    int64 // ms since the epoch
	Type    jute.Op
	Record  []byte
}

// Bytes is t as a PROPOSAL's or INFORM's data: the TxnHeader {long
// clientId, int cxid, long zxid, long time, int type}, then the record.
func (t Txn) Bytes() []byte {
	var w jute.Writer
	w.Long(t.Session)
	w.Int(t.Cxid)
	w.Long(t.Zxid)
	w.Long(t.Time)
	w.Int(int32(t.Type))
	w.Raw(t.Record)
	return w.Buf
}

// openACL is world:anyone with every permission.
var openACL = []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}

// CreateTxn is a CreateTxn {path, data, acl, ephemeral,
// parentCVersion} of a node open to anyone; parentCVersion -1 leaves the
// parent's child version to the create.
func CreateTxn(path string, data []byte, ephemeral bool) []byte {
	var w jute.Writer
	w.String(path)
	w.Buffer(data)
	jute.WriteACLs(&w, openACL)
	w.Bool(ephemeral)
	w.Int(-1)
	return w.Buf
}

// CreateTTLTxn is a CreateTTLTxn {path, data, acl, parentCVersion,
// ttl} of a node open to anyone: what a leader with extended types
// commits for a createTTL. parentCVersion is the parent's stored child
// count after the create (-1 leaves it to the create).
func CreateTTLTxn(path string, data []byte, parentCVersion int32, ttl int64) []byte {
	var w jute.Writer
	w.String(path)
	w.Buffer(data)
	jute.WriteACLs(&w, openACL)
	w.Int(parentCVersion)
	w.Long(ttl)
	return w.Buf
}

// CreateContainerTxn is a CreateContainerTxn {path, data, acl,
// parentCVersion} of a node open to anyone.
func CreateContainerTxn(path string, data []byte, parentCVersion int32) []byte {
	var w jute.Writer
	w.String(path)
	w.Buffer(data)
	jute.WriteACLs(&w, openACL)
	w.Int(parentCVersion)
	return w.Buf
}

// SetDataTxn is a SetDataTxn {path, data, version}: version is the
// node's new one.
func SetDataTxn(path string, data []byte, version int32) []byte {
	var w jute.Writer
	w.String(path)
	w.Buffer(data)
	w.Int(version)
	return w.Buf
}

// DeleteTxn is a DeleteTxn {path}.
func DeleteTxn(path string) []byte {
	var w jute.Writer
	w.String(path)
	return w.Buf
}

// CheckVersionTxn is a CheckVersionTxn {path, version}, a multi's check.
func CheckVersionTxn(path string, version int32) []byte {
	var w jute.Writer
	w.String(path)
	w.Int(version)
	return w.Buf
}

// ErrorTxn is an ErrorTxn {int err}: the transaction of a request that
// failed on the leader (type OpError).
func ErrorTxn(code jute.ErrCode) []byte {
	var w jute.Writer
	w.Int(int32(code))
	return w.Buf
}

// CreateSessionTxn is a CreateSessionTxn {int timeOut}.
func CreateSessionTxn(timeout int32) []byte {
	var w jute.Writer
	w.Int(timeout)
	return w.Buf
}

// CloseSessionTxn is a closeSession's record from ZooKeeper 3.6 on: the
// session's ephemerals to delete.
func CloseSessionTxn(ephemerals ...string) []byte {
	var w jute.Writer
	w.Strings(ephemerals)
	return w.Buf
}

// Op is one operation of a MultiTxn: its type (OpError for the failing
// one and those after it in a failed multi) and record.
type Op struct {
	Type   jute.Op
	Record []byte
}

// MultiTxn is a MultiTxn {vector<Txn {int type, buffer data}>}.
func MultiTxn(ops ...Op) []byte {
	var w jute.Writer
	w.Int(int32(len(ops)))
	for _, op := range ops {
		w.Int(int32(op.Type))
		w.Buffer(op.Record)
	}
	return w.Buf
}
