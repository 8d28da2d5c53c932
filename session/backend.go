package session

import (
	"go.uber.org/zap"

	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/watches"
	"github.com/zkraft/zkraft/znode"
)

// Backend is the replicated state a Server serves: reads come from its
// tree, writes go through it, and its watch registry fires the events of
// what it applies. An ensemble member (*ensemble.Node) is one; an
// observer of a running ZooKeeper ensemble during a live migration
// (internal/zookeeper/observer) is the other.
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
	// SessionPasswd is the password every server of the ensemble
	// derives for session id (ZooKeeper's): a session created on
	// another server moments ago may not be applied here yet, and is
	// checked against it, then revalidated.
	SessionPasswd(id int64) []byte
}

var _ Backend = (*ensemble.Node)(nil)

// backendRef boxes a Backend for an atomic pointer.
type backendRef struct{ Backend }

// backend is the Backend served now. A request reads it once per use:
// across SwitchBackend, a request begun on the old backend completes
// there (SwitchBackend's caller drains them first).
func (s *Server) backend() Backend { return s.be.Load().Backend }

// hooks are what the server asks its backend to call.
func (s *Server) hooks() ensemble.Hooks {
	return ensemble.Hooks{SessionClosed: s.sessionClosed, SessionMoved: s.sessionMoved}
}

// SwitchBackend makes b the backend served from now on, keeping every
// connection, its session and its watches: a live migration's cutover,
// from an observer of ZooKeeper to the new zkraft ensemble's member. The
// caller first stops the old backend taking requests and completes
// those it holds (b's tree holds the same sessions, and b uses the old
// backend's watch registry), and afterwards hands b the requests it
// held back. Each connection's identities, which writes name by key,
// must be in b's log: the caller proposes them (the old backend knows
// them).
func (s *Server) SwitchBackend(b Backend) {
	b.SetHooks(s.hooks())
	s.be.Store(&backendRef{b})
	s.log.Info("serving a new backend", zap.String("mode", b.Mode()))
}
