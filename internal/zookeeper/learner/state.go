package learner

import (
	"fmt"
	"io"

	"github.com/zkraft/zkraft/internal/zookeeper/importer"
	"github.com/zkraft/zkraft/znode"
)

// SaveState writes the followed tree, its sessions and last zxid, in
// zkraft's snapshot format (znode.Tree.WriteSnapshot), for Resume. The
// tree is consistent at one zxid: transactions wait while it is written.
func (l *Learner) SaveState(w io.Writer) error {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if err := l.f.Tree().WriteSnapshot(w); err != nil {
		return fmt.Errorf("learner: saving the followed tree: %w", err)
	}
	return nil
}

// Resume is New starting from a tree SaveState wrote: it announces the
// tree's last zxid, so the leader syncs it by DIFF when it still has the
// transactions since, and by SNAP (or TRUNC, for a tree from another
// ensemble's history) otherwise.
func Resume(cfg Config, r io.Reader) (*Learner, error) {
	tree, err := znode.ReadSnapshot(r, cfg.Options)
	if err != nil {
		return nil, fmt.Errorf("learner: reading a saved tree: %w", err)
	}
	l := New(cfg)
	l.f = importer.FollowTree(tree)
	l.status.LastZxid = tree.LastZxid()
	l.lastZxid.Store(tree.LastZxid())
	l.acceptedEpoch = epochOf(tree.LastZxid())
	l.currentEpoch = l.acceptedEpoch
	return l, nil
}
