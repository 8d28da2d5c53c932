package operator

import (
	"time"

	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/session"
	"github.com/zkraft/zkraft/watches"
	"github.com/zkraft/zkraft/znode"
)

// Member is the replicated state a server's operator surfaces read: an
// ensemble member (*ensemble.Node), or an observer of a ZooKeeper
// ensemble during a live migration. It lists exactly what the four-letter
// words, the AdminServer and the mntr figures ask of it; the meaning of
// each method is *ensemble.Node's.
type Member interface {
	// ID is the member's server id (0 for a standalone server).
	ID() uint8
	// Mode is its role: "standalone", "leader", "follower", "observer".
	Mode() string
	// HasQuorum reports whether it is part of a working majority.
	HasQuorum() bool
	// IsLeader reports whether it leads the ensemble.
	IsLeader() bool
	// Leader is the leader's id and member address, ok false if none.
	Leader() (id uint8, addr string, ok bool)
	// Members are the voting and observing members now.
	Members() []ensemble.Peer
	// Membership are the members and the configuration's version, as
	// /zookeeper/config holds them.
	Membership() ([]ensemble.Peer, int64)
	// QuorumSize is the number of voting members (ZooKeeper's quorum_size).
	QuorumSize() int
	// SyncedFollowers counts the learners answering the leader.
	SyncedFollowers() (voters, observers int)
	// LeaderUptime is how long it has led (0 if it does not).
	LeaderUptime() time.Duration
	// Term is the leader's term (ZooKeeper's epoch).
	Term() uint64
	// LastZxid is the zxid of the last transaction applied.
	LastZxid() int64
	// ProposalSizes are the last, smallest and largest proposal sizes.
	ProposalSizes() (last, min, max int64)
	// FsyncTimes are the log's sync times.
	FsyncTimes() ensemble.FsyncTimes
	// LastSnapshot is the last snapshot's index and time, ok false if none.
	LastSnapshot() (index uint64, at time.Time, ok bool)
	// Snapshot takes a snapshot now.
	Snapshot() error
	// SessionDeadlines are the live sessions' expiry times (those this
	// member tracks).
	SessionDeadlines() map[int64]time.Time
	// Watches is the member's watch registry.
	Watches() *watches.Registry
	// RLockTree read-locks the data tree and returns it, until
	// RUnlockTree.
	RLockTree() *znode.Tree
	// RUnlockTree releases RLockTree's lock.
	RUnlockTree()
	// CopyTree returns a copy of the data tree, taken without stopping
	// writes.
	CopyTree() (*znode.Tree, error)
}

var _ Member = (*ensemble.Node)(nil)

// memberSource is what memberOf needs of a session.Server (an interface so
// tests can stand in servers without a member).
type memberSource interface {
	Node() *ensemble.Node
}

// memberOf is the Member the operator surfaces read for srv: its
// *ensemble.Node, or else its Backend when that is a Member (an observer
// of a ZooKeeper ensemble), or else a member that is not serving, so no
// command panics.
func memberOf(srv *session.Server) Member { return memberFrom(srv) }

func memberFrom(src memberSource) Member {
	// A nil *ensemble.Node in an interface is not a nil interface: test
	// the pointer before storing it.
	if n := src.Node(); n != nil {
		return n
	}
	if b, ok := src.(interface{ Backend() any }); ok {
		switch m := b.Backend().(type) {
		case nil:
		case *ensemble.Node:
			if m != nil {
				return m
			}
		case Member:
			return m
		}
	}
	return newAbsentMember()
}
