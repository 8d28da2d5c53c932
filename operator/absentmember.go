package operator

import (
	"errors"
	"time"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/watches"
	"github.com/zkraft/zkraft/znode"
)

// errNoMember is what absentMember's actions return.
var errNoMember = errors.New("operator: server has no replicated state to act on")

// absentMember is the Member of a server that has none (memberOf): it
// answers as a server that is not serving does, with an empty tree and no
// watches, so every command answers instead of panicking.
type absentMember struct {
	tree    *znode.Tree
	watches *watches.Registry
}

var _ backend.Member = absentMember{}

func newAbsentMember() absentMember {
	return absentMember{tree: znode.NewTree(znode.Options{}), watches: watches.New()}
}

func (absentMember) ID() int64                               { return 0 }
func (absentMember) Mode() string                            { return "" }
func (absentMember) HasQuorum() bool                         { return false }
func (absentMember) IsLeader() bool                          { return false }
func (absentMember) Leader() (int64, string, bool)           { return 0, "", false }
func (absentMember) Members() []backend.Peer                 { return nil }
func (absentMember) Membership() ([]backend.Peer, int64)     { return nil, 0 }
func (absentMember) QuorumSize() int                         { return 0 }
func (absentMember) SyncedFollowers() (int, int)             { return 0, 0 }
func (absentMember) LeaderUptime() time.Duration             { return 0 }
func (absentMember) Term() uint64                            { return 0 }
func (absentMember) LastZxid() int64                         { return 0 }
func (absentMember) ProposalSizes() (int64, int64, int64)    { return 0, 0, 0 }
func (absentMember) FsyncTimes() backend.FsyncTimes          { return backend.FsyncTimes{} }
func (absentMember) LastSnapshot() (uint64, time.Time, bool) { return 0, time.Time{}, false }
func (absentMember) Snapshot() error                         { return errNoMember }
func (absentMember) SessionDeadlines() map[int64]time.Time   { return nil }
func (m absentMember) Watches() *watches.Registry            { return m.watches }
func (m absentMember) RLockTree() *znode.Tree                { return m.tree }
func (absentMember) RUnlockTree()                            {}
func (absentMember) CopyTree() (*znode.Tree, error)          { return nil, errNoMember }
