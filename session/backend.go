package session

import (
	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/watches"
	"github.com/zkraft/zkraft/znode"
)

// Backend is the replicated state a Server serves: reads come from its
// tree, writes go through it, and its watch registry fires the events of
// what it applies. An ensemble member (*ensemble.Node) is one; an
// observer of a running ZooKeeper ensemble during a live migration
// (internal/zkobserver) is the other.
//
// The contract is ensemble.Node's: Propose and Barrier complete their
// Waiter exactly once, Applied with the tree locked right after the
// transaction and its watch events; RLockTree holds off every change
// until RUnlockTree.
type Backend interface {
	// ID is this server's id (myid).
	ID() uint8
	// Mode is its role as srvr reports it: standalone, leader, follower,
	// observer.
	Mode() string
	// HasQuorum reports whether it can commit writes now.
	HasQuorum() bool
	// LastZxid is the zxid of the last transaction applied here.
	LastZxid() int64
	RLockTree() *znode.Tree
	RUnlockTree()
	Watches() *watches.Registry
	// Propose submits a write; ProposeWait submits one and waits.
	Propose(txn *znode.Txn, w ensemble.Waiter)
	ProposeWait(txn *znode.Txn) (*znode.Result, error)
	// Barrier completes w once everything committed before it is applied
	// here.
	Barrier(w ensemble.Waiter)
	// TouchSession notes that a client used session id.
	TouchSession(id int64)
	// AnnounceSession tells the ensemble that session id's connection is
	// now here.
	AnnounceSession(id int64)
	Reconfig(req *jute.ReconfigRequest, ids []jute.Id, w ensemble.Waiter)
	SetHooks(h ensemble.Hooks)
	ResetProposalSizes()
	ResetFsyncTimes()
}

// Revalidator is an optional Backend method. A backend whose sessions
// belong to an ensemble it does not lead (an observer of ZooKeeper)
// asks that ensemble whether a session a client resumes is still valid,
// and takes it over, before the handshake completes (ZooKeeper's
// REVALIDATE); the answer false is expiry to the client.
type Revalidator interface {
	Revalidate(id int64, timeout int32) (bool, error)
}

var _ Backend = (*ensemble.Node)(nil)
