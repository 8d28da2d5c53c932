package server

import (
	"testing"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/znode"
)

// TestLearnerTakesTheServersTreeOptions: an observer's tree has the
// server's own options, as ZooKeeper's -D properties spell them in
// zoo.cfg (skipACL, enforceQuota, extendedTypesEnabled), so its reads go
// by them as a member's do; before, it had extended types only, so an
// observer with skipACL=yes still checked its clients' reads. The
// transactions ZooKeeper commits apply whatever they are (importer).
func TestLearnerTakesTheServersTreeOptions(t *testing.T) {
	st, _ := mustApply(t, "tickTime=2000\ndataDir=/tmp/x\nmigration.followZooKeeper=true\n"+
		"zookeeper.skipACL=yes\nzookeeper.enforceQuota=true\nzookeeper.extendedTypesEnabled=true\n"+
		"server.1=10.0.0.1:2888:3888\nserver.4=10.0.0.4:2888:3888:observer\n")
	st.SetID(4)
	cfg, err := LearnerConfig(st, "zoo.cfg", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if want := (znode.Options{SkipACL: true, EnforceQuota: true, ExtendedTypes: true}); cfg.Options != want {
		t.Errorf("learner options %+v, want %+v", cfg.Options, want)
	}
}
