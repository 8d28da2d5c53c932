package observer

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/internal/zookeeper/importer"
	"github.com/zkraft/zkraft/internal/zookeeper/learner"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// Propose forwards a client's write to ZooKeeper's leader and completes
// w with the reply once the leader's transaction is applied here. An
// OpSetIdentities (a connection's new identities) is kept, not
// forwarded: ZooKeeper takes a request's identities with the request.
func (b *Backend) Propose(txn *znode.Txn, w backend.Waiter) {
	if a, ok := w.(backend.Abandoner); ok && a.Abandoned() {
		w.Failed(ErrRequesterGone)
		return
	}
	if b.hold(txn, w) {
		return // held for the cutover, or handed to the new ensemble
	}
	b.propose(txn, w)
}

// propose forwards txn (Propose, once hold let it through).
func (b *Backend) propose(txn *znode.Txn, w backend.Waiter) {
	switch txn.Type {
	case znode.OpSetIdentities:
		b.mu.Lock()
		b.ids[txn.Session] = append([]jute.Id(nil), txn.Ids...)
		b.mu.Unlock()
		t := b.l.RLockTree()
		w.Applied(&znode.Result{Zxid: t.LastZxid()}, t)
		b.l.RUnlockTree()
		return
	case jute.OpCreateSession:
		b.createSession(txn, w)
		return
	}
	b.mu.Lock()
	ids := b.ids[txn.Session]
	b.mu.Unlock()
	// The caller's frame is reused once Propose returns.
	b.forward(txn.Session, txn.Type, append([]byte(nil), txn.Req...), ids, w)
}

// forward sends a request of type op to ZooKeeper's leader as session's,
// with the connection's identities ids, and completes w with the reply
// built from its transaction.
func (b *Backend) forward(session int64, op jute.Op, req []byte, ids []jute.Id, w backend.Waiter) {
	b.l.Forward(session, b.cxid.Add(1), op, req, ids, func(out learner.Outcome, tree *znode.Tree, err error) {
		defer b.answered()
		if err != nil {
			w.Failed(err)
			return
		}
		w.Applied(reply(op, out), tree)
	})
}

// ProposeWait proposes txn and waits for its outcome.
func (b *Backend) ProposeWait(txn *znode.Txn) (*znode.Result, error) {
	ch := make(chan waitResult, 1)
	b.Propose(txn, chanWaiter(ch))
	r := <-ch
	return r.res, r.err
}

type waitResult struct {
	res *znode.Result
	err error
}

// chanWaiter hands a proposal's outcome to ProposeWait.
type chanWaiter chan waitResult

func (c chanWaiter) Applied(res *znode.Result, _ *znode.Tree) { c <- waitResult{res: res} }
func (c chanWaiter) Failed(err error)                         { c <- waitResult{err: err} }

// createSession opens txn's session on the ensemble: a createSession
// request of its id and timeout, as a ZooKeeper observer forwards it.
// The leader keeps the id; the password is ZooKeeper's for it, which
// applying the transaction puts in the tree.
func (b *Backend) createSession(txn *znode.Txn, w backend.Waiter) {
	body := binary.BigEndian.AppendUint32(nil, uint32(txn.Timeout))
	id, timeout := txn.Session, txn.Timeout
	b.l.Forward(id, 0, jute.OpCreateSession, body, nil, func(out learner.Outcome, tree *znode.Tree, err error) {
		defer b.answered()
		if err != nil {
			w.Failed(err)
			return
		}
		if out.Err == jute.OK {
			b.mu.Lock()
			b.timeouts[id] = timeout
			b.mu.Unlock()
		}
		w.Applied(&znode.Result{Zxid: out.Txn.Zxid, Err: out.Err}, tree)
	})
}

// syncer is what a client request's waiter tells about itself: its
// session (ZooKeeper's leader checks a forwarded request's session).
type syncer interface{ Session() int64 }

// sessionOf is the session w answers, 0 if it does not say.
func sessionOf(w backend.Waiter) int64 {
	if s, ok := w.(syncer); ok {
		return s.Session()
	}
	return 0
}

// Barrier completes w once everything ZooKeeper's leader committed
// before it is applied here: a sync forwarded for w's session.
func (b *Backend) Barrier(w backend.Waiter) {
	if a, ok := w.(backend.Abandoner); ok && a.Abandoned() {
		w.Failed(ErrRequesterGone)
		return
	}
	if b.holdBarrier(w) {
		return
	}
	b.barrier(w)
}

// barrier forwards a sync for w (Barrier, once holdBarrier let it
// through).
func (b *Backend) barrier(w backend.Waiter) {
	b.l.ForwardSync(sessionOf(w), b.cxid.Add(1), "/", func(_ learner.Outcome, tree *znode.Tree, err error) {
		defer b.answered()
		if err != nil {
			w.Failed(err)
			return
		}
		w.Applied(&znode.Result{Zxid: tree.LastZxid()}, tree)
	})
}

// TouchSession notes that a client used session id here: the next ping
// reply to the leader keeps it alive.
func (b *Backend) TouchSession(id int64) {
	if next := b.successor(); next != nil {
		next.TouchSession(id)
		return
	}
	b.mu.Lock()
	timeout, ok := b.timeouts[id]
	b.mu.Unlock()
	if ok {
		b.l.Touch(id, timeout)
	}
}

// Revalidate asks ZooKeeper's leader whether session id, which a client
// brings from another server, is valid, and takes it over if so: the
// leader then takes its writes from here.
func (b *Backend) Revalidate(id int64, timeout int32) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), b.wait)
	defer cancel()
	ok, err := b.l.Revalidate(ctx, id, timeout)
	if err != nil {
		return false, fmt.Errorf("observer: %w", err)
	}
	if ok {
		b.mu.Lock()
		b.timeouts[id] = timeout
		b.mu.Unlock()
		b.l.Touch(id, timeout)
	}
	return ok, nil
}

// SessionPasswd is ZooKeeper's password for session id, which every
// ZooKeeper server derives from the id.
func (b *Backend) SessionPasswd(id int64) []byte { return importer.Passwd(id) }

// Reconfig forwards a client's reconfig to ZooKeeper's leader, as a
// ZooKeeper observer does: the leader checks it (in progress, version,
// arguments, WRITE on /zookeeper/config) and commits the new
// configuration, which reaches here as INFORMANDACTIVATE. w gets what
// applying it gave, /zookeeper/config's data and Stat (ZooKeeper's
// FinalRequestProcessor answers the configuration and that Stat), or the
// leader's error.
func (b *Backend) Reconfig(req *jute.ReconfigRequest, ids []jute.Id, w backend.Waiter) {
	if a, ok := w.(backend.Abandoner); ok && a.Abandoned() {
		w.Failed(ErrRequesterGone)
		return
	}
	if b.holdReconfig(req, ids, w) {
		return
	}
	// A reconfig comes with its connection's identities (no
	// OpSetIdentities comes before it).
	b.forward(sessionOf(w), jute.OpReconfig, jute.Marshal(req), ids, w)
}
