package importer

import (
	"errors"
	"fmt"

	"github.com/zkraft/zkraft/internal/zookeeper/datadir"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// Follower applies a ZooKeeper ensemble's transactions to a zkraft tree
// one by one, each at its ZooKeeper zxid and time, by the rules
// ZooKeeper's own replay follows over a fuzzy snapshot (replayStep,
// danglingACLs.settle): a learner's snapshot from the leader is as fuzzy
// as a snapshot file, and the transactions queued after it may be in it
// already. It is what Load uses for the logs, and what a learner
// following a live ensemble uses for its stream. It is not safe for
// concurrent use.
type Follower struct {
	tree     *znode.Tree
	dangling danglingACLs
	unowned  map[int64][]string
	// Replayed, Skipped, Settled and Conflicts count as Result's do.
	Replayed, Skipped, Settled int
	Conflicts                  []string
}

// NewFollower starts from ZooKeeper's empty tree (zxid 0), as a server
// that has seen no transaction.
func NewFollower(opts znode.Options) *Follower {
	return &Follower{tree: znode.NewTree(opts)}
}

// FollowSnapshot starts from a ZooKeeper snapshot.
func FollowSnapshot(s *datadir.Snapshot, opts znode.Options) (*Follower, error) {
	t, dangling, unowned, err := fromSnapshot(s, opts, Passwd)
	if err != nil {
		return nil, err
	}
	return &Follower{tree: t, dangling: dangling, unowned: unowned}, nil
}

// Tree is the tree being followed; the Follower changes it in Apply.
func (f *Follower) Tree() *znode.Tree { return f.tree }

// Apply applies one ZooKeeper transaction; the tree's last zxid becomes
// t.Zxid even if the transaction changes nothing here (an error
// transaction). An error means the transaction could not be read (or is
// not what ZooKeeper writes), and the tree may hold part of it.
func (f *Follower) Apply(t datadir.Txn) error {
	_, err := f.ApplyResults(t)
	return err
}

// ApplyResults is Apply returning what applying the transaction gave
// here: one result per change (one, or one per operation of a multi),
// none for a transaction that changes nothing (an error transaction, a
// check).
func (f *Follower) ApplyResults(t datadir.Txn) ([]*znode.Result, error) {
	steps, err := convert(t)
	if errors.Is(err, errSkip) {
		f.Skipped++
		f.tree.AdvanceZxid(t.Zxid)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	f.Replayed++
	results := make([]*znode.Result, 0, len(steps))
	for _, s := range steps {
		res := replayStepResult(f.tree, s, t.Zxid)
		results = append(results, res)
		code := res.Err
		if err := f.dangling.settle(f.tree, s, code); err != nil {
			return nil, fmt.Errorf("importer: zxid %#x: %w", t.Zxid, err)
		}
		if s.txn.Type == jute.OpCreateSession && code == jute.OK && len(f.unowned[t.ClientID]) > 0 {
			// Its ephemerals the snapshot held are its own now.
			f.tree.SettleEphemerals(t.Zxid, f.unowned[t.ClientID])
			delete(f.unowned, t.ClientID)
		}
		if code != jute.OK {
			f.Settled++
			if len(f.Conflicts) < 20 {
				f.Conflicts = append(f.Conflicts, fmt.Sprintf("zxid %#x (type %d): %v", t.Zxid, s.txn.Type, code))
			}
		}
	}
	f.tree.AdvanceZxid(t.Zxid)
	return results, nil
}

// FollowTree goes on from a tree a Follower held before (saved and read
// back): its last zxid is the last transaction applied to it.
func FollowTree(t *znode.Tree) *Follower { return &Follower{tree: t} }
