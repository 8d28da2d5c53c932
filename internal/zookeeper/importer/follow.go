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
	// Replayed, Skipped, Settled, Conflicts, NotApplied and Unapplied
	// count as Result's do.
	Replayed, Skipped, Settled int
	Conflicts                  []string
	NotApplied                 int
	Unapplied                  []string
	// LastUnapplied describes the last change not applied ("" if none).
	LastUnapplied string
	// TTLCreates counts the TTL nodes created.
	TTLCreates int
}

// maxListed bounds Conflicts and Unapplied.
const maxListed = 20

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
	opts := replayOptions(f.tree.Options())
	for _, s := range steps {
		s.txn.Options = opts
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
		switch {
		case code == jute.OK:
			if s.txn.Type == jute.OpCreateTTL {
				f.TTLCreates++
			}
		case heldAlready(code):
			f.Settled++
			if len(f.Conflicts) < maxListed {
				f.Conflicts = append(f.Conflicts, fmt.Sprintf("zxid %#x (type %d): %v", t.Zxid, s.txn.Type, code))
			}
		default:
			f.NotApplied++
			f.LastUnapplied = fmt.Sprintf("zxid %#x (type %d %s): %v", t.Zxid, s.txn.Type, s.path, code)
			if len(f.Unapplied) < maxListed {
				f.Unapplied = append(f.Unapplied, f.LastUnapplied)
			}
		}
	}
	f.tree.AdvanceZxid(t.Zxid)
	return results, nil
}

// replayOptions are the options a replayed transaction applies with
// (Txn.Options), whatever the tree's own: ZooKeeper committed it, so
// nothing this server's settings gate may refuse it, as a zkraft member
// applies its leader's writes with the leader's options. Extended types
// are on, so a TTL create (and the reaper's delete of an expired TTL
// node) applies; quotas are not enforced, ZooKeeper's leader enforced
// them (PrepRequestProcessor) or not. The tree's own options go on
// deciding its reads, and what this server's clients may ask for after a
// cutover; skipACL stays the tree's (replayer passes every check).
func replayOptions(own znode.Options) znode.OptionBits {
	own.ExtendedTypes, own.EnforceQuota = true, false
	return own.Bits()
}

// heldAlready reports whether a replayed change that failed with code
// failed as one a fuzzy snapshot already holds does (ZooKeeper's own
// replay changes nothing for these either): its node already created,
// already deleted (or its parent), its version already reached, or its
// node already given the children created after it. Any other failure is
// a change ZooKeeper committed that this tree refused: not applied.
func heldAlready(code jute.ErrCode) bool {
	switch code {
	case jute.ErrNodeExists, jute.ErrNoNode, jute.ErrBadVersion, jute.ErrNotEmpty:
		return true
	}
	return false
}

// FollowTree goes on from a tree a Follower held before (saved and read
// back): its last zxid is the last transaction applied to it.
func FollowTree(t *znode.Tree) *Follower { return &Follower{tree: t} }
