package observer

import (
	"errors"
	"time"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/znode"
)

// What the four-letter words and the AdminServer read of an observer
// (backend.Member). An observer leads nothing, holds no Raft log and
// takes no snapshots; ZooKeeper's leader tracks its sessions.

// ErrNoSnapshots answers a snapshot request: the followed tree is
// ZooKeeper's, whose own servers snapshot it.
var ErrNoSnapshots = errors.New("observer: an observer of ZooKeeper takes no snapshots")

// IsLeader is false.
func (b *Backend) IsLeader() bool { return false }

// SetMembers sets the ensemble's servers as this server's configuration
// names them (zoo.cfg's server.N lines, this observer's among them), for
// Members and the leader's id. Call it before serving.
func (b *Backend) SetMembers(peers []backend.Peer) {
	b.members = append([]backend.Peer(nil), peers...)
}

// Leader is ZooKeeper's leader's id (its server.N line with the quorum
// address the observer follows, 0 if none has it) and quorum address
// when following one.
func (b *Backend) Leader() (id int64, addr string, ok bool) {
	st := b.l.Status()
	for _, p := range b.Members() {
		if p.Addr == st.Leader && !p.Observer {
			id = p.ID
		}
	}
	return id, st.Leader, st.Synced
}

// Members are the ensemble's servers (see Membership).
func (b *Backend) Members() []backend.Peer {
	peers, _ := b.Membership()
	return peers
}

// Membership is the ensemble's configuration as a ZooKeeper server holds
// it: the one in /zookeeper/config with its version once a reconfig (or
// ZooKeeper's own dynamic configuration) wrote it there, else the static
// one SetMembers set, at version 0.
func (b *Backend) Membership() ([]backend.Peer, int64) {
	if peers, version, ok := b.l.Configuration(); ok {
		return peers, version
	}
	return append([]backend.Peer(nil), b.members...), 0
}

// QuorumSize is the number of ZooKeeper's voting servers (its
// quorum_size; 0 before SetMembers).
func (b *Backend) QuorumSize() int {
	voters := 0
	for _, p := range b.Members() {
		if !p.Observer {
			voters++
		}
	}
	return voters
}

// SyncedFollowers is 0, 0: only a leader has followers.
func (b *Backend) SyncedFollowers() (voters, observers int) { return 0, 0 }

// LeaderUptime is 0: only a leader has it.
func (b *Backend) LeaderUptime() time.Duration { return 0 }

// Term is ZooKeeper's epoch now.
func (b *Backend) Term() uint64 { return uint64(b.l.Status().Epoch) }

// ProposalSizes are 0: an observer proposes nothing.
func (b *Backend) ProposalSizes() (last, min, max int64) { return 0, 0, 0 }

// FsyncTimes are 0: an observer writes no log.
func (b *Backend) FsyncTimes() backend.FsyncTimes { return backend.FsyncTimes{} }

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
