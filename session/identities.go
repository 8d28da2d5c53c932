package session

import (
	"time"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// A connection's identities reach the log once per set, not with every
// write (znode/identities.go): before its first write, and after each
// change, the connection proposes an OpSetIdentities for its session, and
// its writes name the set by key. Both are proposed from the reader
// goroutine, so the set is in the log before the writes that name it.

// identityKey is the IdentityKey of the connection's current identities.
func (c *conn) identityKey() uint64 { return c.idsKey.Load() }

// writeIdentities returns the identities key for a write, first proposing
// the connection's set if the log does not have it from this connection.
// Only the reader goroutine calls it.
func (c *conn) writeIdentities() uint64 {
	key := c.identityKey()
	if key != c.idsLogged {
		c.idsLogged = key
		c.srv.backend().Propose(&znode.Txn{
			Type: znode.OpSetIdentities, Session: c.sessionID, Time: time.Now().UnixMilli(), Ids: c.Ids(),
		}, &identitiesWaiter{c: c})
	}
	return key
}

// identitiesWaiter follows an OpSetIdentities. The writes after it name
// its set, so if it fails (not committed, or refused) the connection is
// closed as after a failed write: the client reconnects and retries.
type identitiesWaiter struct{ c *conn }

// Abandoned implements ensemble.Abandoner.
func (w *identitiesWaiter) Abandoned() bool { return w.c.out.isDead() }

// Applied implements ensemble.Waiter.
func (w *identitiesWaiter) Applied(res *znode.Result, _ *znode.Tree) {
	if res.Err != jute.OK {
		w.Failed(res.Err)
	}
}

// Failed implements ensemble.Waiter.
func (w *identitiesWaiter) Failed(err error) {
	w.c.out.kill()
	w.c.logger().Warn("identities not recorded; closing connection", zap.Error(err))
	w.c.closeSocket()
}
