package importer

import (
	"strings"
	"testing"

	"github.com/zkraft/zkraft/internal/zookeeper/datadir"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// setDataTxn is a SetDataTxn {path, data, version}, as ZooKeeper logs a
// reconfig.
func setDataTxn(path, data string, version int32) []byte {
	var w jute.Writer
	w.String(path)
	w.Buffer([]byte(data))
	w.Int(version)
	return w.Buf
}

// TestReplayReconfig: a reconfig transaction sets /zookeeper/config as
// ZooKeeper's DataTree does: its data verbatim (the "version=" line is the
// zxid in hex), version -1, mzxid and mtime the transaction's. A reconfig
// of another node, or whose version line is not its zxid, is refused.
func TestReplayReconfig(t *testing.T) {
	const members = "server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181\nserver.2=127.0.0.1:2889:3889:participant;127.0.0.1:2182\n"
	f := NewFollower(znode.Options{})
	data := members + "version=100000003"
	if err := f.Apply(datadir.Txn{Type: jute.OpReconfig, ClientID: 0x55, Zxid: 0x100000003, Time: 77,
		Body: setDataTxn(znode.ConfigPath, data, -1)}); err != nil {
		t.Fatal(err)
	}
	got, st, err := f.Tree().GetData(znode.ConfigPath, replayer)
	if err != nil || string(got) != data || st.Version != -1 || st.Mzxid != 0x100000003 || st.Mtime != 77 || st.DataLength != int32(len(data)) {
		t.Fatalf("/zookeeper/config %q %+v %v", got, st, err)
	}
	for name, body := range map[string][]byte{
		"another node":         setDataTxn("/zookeeper/quota", data, -1),
		"another version line": setDataTxn(znode.ConfigPath, members+"version=100000002", -1),
		"no version line":      setDataTxn(znode.ConfigPath, members, -1),
		"truncated":            setDataTxn(znode.ConfigPath, data, -1)[:20],
	} {
		err := f.Apply(datadir.Txn{Type: jute.OpReconfig, ClientID: 0x55, Zxid: 0x100000004, Time: 78, Body: body})
		if err == nil || !strings.Contains(err.Error(), "zxid 0x100000004") {
			t.Errorf("%s: %v, want a refusal", name, err)
		}
	}
}
