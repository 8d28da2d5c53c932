package importer

import (
	"fmt"
	"maps"
	"slices"

	"github.com/zkraft/zkraft/internal/zookeeper/datadir"
	"github.com/zkraft/zkraft/znode"
)

// FromSnapshot builds the tree of a consistent snapshot: one written of a
// tree at one zxid, as zkraft's AdminServer writes them (ZooKeeper's own
// are fuzzy and need their logs: Load). Nothing is replayed, so it must
// hold every ACL its nodes name and the session of every ephemeral; a
// snapshot that does not is refused. passwd gives each session its
// password.
func FromSnapshot(s *datadir.Snapshot, opts znode.Options, passwd func(int64) []byte) (*znode.Tree, error) {
	t, dangling, unowned, err := fromSnapshot(s, opts, passwd)
	if err != nil {
		return nil, err
	}
	for _, path := range slices.Sorted(maps.Keys(dangling)) {
		return nil, fmt.Errorf("importer: %s names ACL %d, which the snapshot lacks (%d such nodes)", path, dangling[path], len(dangling))
	}
	for _, owner := range slices.Sorted(maps.Keys(unowned)) {
		return nil, fmt.Errorf("importer: %s is an ephemeral of session %#x, which the snapshot lacks (%d such sessions)",
			unowned[owner][0], owner, len(unowned))
	}
	return t, nil
}
