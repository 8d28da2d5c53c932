package backend

import (
	"time"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/watches"
	"github.com/zkraft/zkraft/znode"
)

// Member is a replicated server as the operator surfaces read it: what
// the four-letter words, the AdminServer and the metrics ask of it. An
// ensemble member (*ensemble.Node) is one; an observer of a running
// ZooKeeper ensemble during a live migration (internal/zookeeper/observer)
// is the other. The meaning of each method is *ensemble.Node's.
type Member interface {
	// ID is the member's server id (0 for a standalone server).
	ID() int64
	// Mode is its role as srvr reports it: "standalone", "leader",
	// "follower", "observer".
	Mode() string
	// HasQuorum reports whether it is part of a working majority: whether
	// it can commit writes now.
	HasQuorum() bool
	// IsLeader reports whether it leads the ensemble.
	IsLeader() bool
	// Leader is the leader's id and member address, ok false if none.
	Leader() (id int64, addr string, ok bool)
	// Members are the voting and observing members now.
	Members() []Peer
	// Membership are the members and the configuration's version, as
	// /zookeeper/config holds them.
	Membership() ([]Peer, int64)
	// QuorumSize is the number of voting members (ZooKeeper's quorum_size).
	QuorumSize() int
	// SyncedFollowers counts the learners answering the leader.
	SyncedFollowers() (voters, observers int)
	// LeaderUptime is how long it has led (0 if it does not).
	LeaderUptime() time.Duration
	// Term is the leader's term (ZooKeeper's epoch).
	Term() uint64
	// LastZxid is the zxid of the last transaction applied here.
	LastZxid() int64
	// ProposalSizes are the last, smallest and largest proposal sizes.
	ProposalSizes() (last, min, max int64)
	// FsyncTimes are the log's sync times.
	FsyncTimes() FsyncTimes
	// LastSnapshot is the last snapshot's index and time, ok false if none.
	LastSnapshot() (index uint64, at time.Time, ok bool)
	// Snapshot takes a snapshot now.
	Snapshot() error
	// SessionDeadlines are the live sessions' expiry times (those this
	// member tracks).
	SessionDeadlines() map[int64]time.Time
	// Watches is the member's watch registry: it fires the events of what
	// the member applies.
	Watches() *watches.Registry
	// RLockTree read-locks the data tree and returns it; RLockTree holds
	// off every change until RUnlockTree.
	RLockTree() *znode.Tree
	// RUnlockTree releases RLockTree's lock.
	RUnlockTree()
	// CopyTree returns a copy of the data tree, taken without stopping
	// writes.
	CopyTree() (*znode.Tree, error)
}

// Backend is the replicated state a session.Server serves: a Member whose
// tree the reads come from, through which the writes go, and whose watch
// registry fires the events of what it applies.
//
// The contract is ensemble.Node's: Propose and Barrier complete their
// Waiter exactly once, Applied with the tree locked right after the
// transaction and its watch events.
type Backend interface {
	Member
	// Propose submits a write; ProposeWait submits one and waits.
	Propose(txn *znode.Txn, w Waiter)
	ProposeWait(txn *znode.Txn) (*znode.Result, error)
	// Barrier completes w once everything committed before it is applied
	// here.
	Barrier(w Waiter)
	// TouchSession notes that a client used session id.
	TouchSession(id int64)
	// AnnounceSession tells the ensemble that session id's connection is
	// now here. w, if not nil, is told once, as for Propose: Applied when
	// the announcement is applied here, Failed when it was not made or
	// not committed.
	AnnounceSession(id int64, w Waiter)
	// Reconfig runs a reconfig request with the caller's identities.
	Reconfig(req *jute.ReconfigRequest, ids []jute.Id, w Waiter)
	// SetHooks installs the session lifecycle hooks.
	SetHooks(h Hooks)
}

// Revalidator is an optional Backend method. A backend whose sessions
// belong to an ensemble it does not lead (an observer of ZooKeeper)
// asks that ensemble whether a session a client resumes is still valid,
// and takes it over, before the handshake completes (ZooKeeper's
// REVALIDATE); the answer false is expiry to the client.
type Revalidator interface {
	Revalidate(id int64, timeout int32) (bool, error)
	// SessionPasswd is the password every server of the ensemble
	// derives for session id (ZooKeeper's): a session created on
	// another server moments ago may not be applied here yet, and is
	// checked against it, then revalidated.
	SessionPasswd(id int64) []byte
}

// FigureResetter is an optional Member method: a member that keeps
// proposal sizes and log sync times starts them over on srst (the
// AdminServer's stat_reset). An observer of ZooKeeper proposes nothing
// and writes no log, and has none.
type FigureResetter interface {
	ResetProposalSizes()
	ResetFsyncTimes()
}

// LeaderCounters is an optional Member method set: ZooKeeper's
// proposal_count and commit_count (the entries a member appended as
// leader, and those committed; reset with the proposal sizes) and its
// unrecoverable_error_count. An observer of ZooKeeper proposes nothing
// and has none.
type LeaderCounters interface {
	ProposalCounts() (proposed, committed int64)
	UnrecoverableErrors() int64
}

// Timings is an optional Member method set: ZooKeeper's snapshottime,
// election_time and startup_snap_load_time summaries and its
// looking_count, since the start or the last ResetTimings (srst).
type Timings interface {
	SnapshotTimes() Times
	ElectionTimes() Times
	StartupSnapLoadTimes() Times
	LookingCount() int64
	ResetTimings()
}

// Raft is what the metrics read of an ensemble member's Raft at scrape
// time (*ensemble.Node).
type Raft interface {
	// Term is the current Raft term (ZooKeeper's epoch).
	Term() uint64
	// Indexes are the member's Raft positions.
	Indexes() RaftIndexes
	// LeaderChanges counts the leaders the member has seen elected.
	LeaderChanges() int64
	// FollowerLags are, on a leader, each other member's lag.
	FollowerLags() []FollowerLag
}
