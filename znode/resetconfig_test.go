package znode

import (
	"testing"

	"github.com/zkraft/zkraft/jute"
)

// TestResetConfig: a tree carried over from another ensemble gets
// /zookeeper/config back as a new tree has it.
func TestResetConfig(t *testing.T) {
	tr := NewTree(Options{})
	fresh, _, err := tr.GetData(ConfigPath, []jute.Id{{Scheme: "super"}})
	if err != nil {
		t.Fatal(err)
	}
	_, want, _ := tr.GetData(ConfigPath, []jute.Id{{Scheme: "super"}})
	res := tr.Apply(&Txn{Type: jute.OpReconfig, Time: 99, Ids: []jute.Id{{Scheme: "super"}},
		Req: []byte("server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181\nversion=100000000")}, 7)
	if res.Err != jute.OK {
		t.Fatalf("reconfig: %v", res.Err)
	}
	tr.ResetConfig()
	data, st, err := tr.GetData(ConfigPath, []jute.Id{{Scheme: "super"}})
	if err != nil || len(data) != len(fresh) || st != want {
		t.Fatalf("after ResetConfig: %q %+v %v; want %q %+v", data, st, err, fresh, want)
	}
}
