package znode

import (
	"bytes"
	"strconv"

	"github.com/zkraft/zkraft/jute"
)

// reconfig rewrites /zookeeper/config with a new membership (Txn.Req holds
// the server.N lines, one per line). The "version=" line is this
// transaction's zxid in hex, as ZooKeeper writes it, so every member
// derives the same text. The caller needs WRITE on /zookeeper/config; the
// membership change itself is Raft's and happened before this entry. As in
// ZooKeeper (a SetDataTxn with version -1) the node's version becomes -1.
//
// The ensemble's first configuration, recorded when it first has a leader,
// comes with its own "version=0" line (InitialConfigVersion): ZooKeeper
// serves its static membership as version 0 with an mzxid of 0, and so does
// this, whatever the log index of the entry that wrote it.
func (a *applier) reconfig() (jute.Record, error) {
	n := a.t.lookup(ConfigPath)
	if n == nil {
		return nil, jute.ErrNoNode
	}
	if err := a.checkPerm(a.t.aclOf(n), jute.PermWrite); err != nil {
		return nil, err
	}
	data, zxid := append([]byte(nil), a.txn.Req...), a.zxid
	if bytes.HasSuffix(data, []byte("\n"+InitialConfigVersion)) {
		zxid = 0
	} else {
		data = append(data, "version="+strconv.FormatInt(zxid, 16)...)
	}
	if err := a.setNodeData(ConfigPath, n, data, -1, zxid, a.txn.Time); err != nil {
		return nil, err
	}
	a.fire(ConfigPath, jute.EventNodeDataChanged, a.t.aclOf(n))
	return &jute.GetDataResponse{Data: n.data, Stat: n.stat()}, nil
}

// InitialConfigVersion ends the membership text of an ensemble's first
// configuration, as ZooKeeper writes its static one into /zookeeper/config.
const InitialConfigVersion = "version=0"
