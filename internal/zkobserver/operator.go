package zkobserver

import (
	"errors"
	"time"

	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/znode"
)

// What the four-letter words and the AdminServer read of an observer
// (operator.Member). An observer leads nothing, holds no Raft log and
// takes no snapshots; ZooKeeper's leader tracks its sessions.

// ErrNoSnapshots answers a snapshot request: the followed tree is
// ZooKeeper's, whose own servers snapshot it.
var ErrNoSnapshots = errors.New("zkobserver: an observer of ZooKeeper takes no snapshots")

// IsLeader is false.
func (b *Backend) IsLeader() bool { return false }

// Leader is ZooKeeper's leader's quorum address when following one (its
// id is not known here).
func (b *Backend) Leader() (id uint8, addr string, ok bool) {
	st := b.l.Status()
	return 0, st.Leader, st.Synced
}

// Members is empty: the ensemble is ZooKeeper's.
func (b *Backend) Members() []ensemble.Peer { return nil }

// Membership is empty: the ensemble is ZooKeeper's.
func (b *Backend) Membership() ([]ensemble.Peer, int64) { return nil, 0 }

// QuorumSize is 0: an observer has no vote.
func (b *Backend) QuorumSize() int { return 0 }

// SyncedFollowers is 0, 0: only a leader has followers.
func (b *Backend) SyncedFollowers() (voters, observers int) { return 0, 0 }

// LeaderUptime is 0: only a leader has it.
func (b *Backend) LeaderUptime() time.Duration { return 0 }

// Term is ZooKeeper's epoch now.
func (b *Backend) Term() uint64 { return uint64(b.l.Status().Epoch) }

// ProposalSizes are 0: an observer proposes nothing.
func (b *Backend) ProposalSizes() (last, min, max int64) { return 0, 0, 0 }

// FsyncTimes are 0: an observer writes no log.
func (b *Backend) FsyncTimes() ensemble.FsyncTimes { return ensemble.FsyncTimes{} }

// LastSnapshot is none.
func (b *Backend) LastSnapshot() (index uint64, at time.Time, ok bool) { return 0, time.Time{}, false }

// Snapshot is refused (ErrNoSnapshots).
func (b *Backend) Snapshot() error { return ErrNoSnapshots }

// SessionDeadlines is nil: ZooKeeper's leader expires the sessions.
func (b *Backend) SessionDeadlines() map[int64]time.Time { return nil }

// CopyTree returns a copy of the followed tree.
func (b *Backend) CopyTree() (*znode.Tree, error) {
	t := b.l.RLockTree()
	defer b.l.RUnlockTree()
	return t.Clone(), nil
}
