package znode

import (
	"strconv"

	"github.com/zkraft/zkraft/jute"
)

// reconfig rewrites /zookeeper/config with a new membership (Txn.Req holds
// the server.N lines, one per line). The "version=" line is this
// transaction's zxid in hex, as ZooKeeper writes it, so every member
// derives the same text. The caller needs WRITE on /zookeeper/config; the
// membership change itself is Raft's and happened before this entry. As in
// ZooKeeper (a SetDataTxn with version -1) the node's version becomes -1.
func (a *applier) reconfig() (jute.Record, error) {
	n := a.t.lookup(ConfigPath)
	if n == nil {
		return nil, jute.ErrNoNode
	}
	if err := a.checkPerm(a.t.aclOf(n), jute.PermWrite); err != nil {
		return nil, err
	}
	data := append(append([]byte(nil), a.txn.Req...), "version="+strconv.FormatInt(a.zxid, 16)...)
	a.setNodeData(ConfigPath, n, data, -1, a.zxid, a.txn.Time)
	a.fire(ConfigPath, jute.EventNodeDataChanged, a.t.aclOf(n))
	return &jute.GetDataResponse{Data: n.data, Stat: n.stat()}, nil
}
