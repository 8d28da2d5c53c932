package backend

import "github.com/zkraft/zkraft/znode"

// Waiter receives the outcome of a proposal. Exactly one of its methods is
// called, once.
type Waiter interface {
	// Applied runs on the FSM goroutine, with the tree's write lock held,
	// right after the transaction and its watch events. t may be read but
	// must not be retained.
	Applied(res *znode.Result, t *znode.Tree)
	// Failed runs on another goroutine when the entry could not be
	// committed (leadership lost, shutdown, timeout).
	Failed(err error)
}

// Abandoner is an optional Waiter method: a waiter whose requester is gone
// (its connection closed) reports true, and a proposal not yet sent is then
// dropped instead of sent. This keeps a session's later writes from
// reaching the log after an earlier one failed.
type Abandoner interface {
	Abandoned() bool
}

// Hooks are told about session lifecycle changes as the FSM applies them.
// They run on the FSM goroutine with the tree's write lock held and must not
// block or call back into the Node.
type Hooks struct {
	// SessionClosed is called after a closeSession (explicit or expiry)
	// has been applied.
	SessionClosed func(id int64)
	// SessionMoved is called when a session's connection moved to member;
	// the other members drop their connection for it.
	SessionMoved func(id int64, member int64)
	// QuorumLost is called when the member, leading, has lost contact
	// with a quorum and stops leading: it must serve nothing more (the
	// session layer closes its read-write connections at once).
	QuorumLost func()
	// TreeReplaced is called after a leader's snapshot replaced the
	// member's tree (a follower too far behind for the log): the tree
	// changed without watch events, so the session layer closes its
	// client connections, and the clients' SetWatches on reconnecting
	// fire what they missed, as after a ZooKeeper follower's resync.
	TreeReplaced func()
}
