package ensemble

import (
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// Propose appends txn to the replicated log. w (if not nil) is told the
// outcome: Applied on the FSM goroutine once the entry is applied on this
// member, or Failed if it could not be committed. Proposals made from one
// goroutine are applied in the order made; on a follower they travel to the
// leader over one ordered connection. txn is encoded before Propose returns
// and not kept: the caller may reuse its buffers then.
func (n *Node) Propose(txn *znode.Txn, w backend.Waiter) {
	n.propose(entry{Kind: kindTxn, Txn: txn}, w)
}

// Barrier is applied after everything proposed before it; w.Applied then
// runs with the member caught up with the leader's commit (sync).
func (n *Node) Barrier(w backend.Waiter) { n.propose(entry{Kind: kindBarrier}, w) }

// AnnounceSession records through the log that this member now holds the
// session's connection, so any other member drops its stale one. A lone
// member has nobody to tell. A member id that does not fit a byte is
// written in the wide form (sessionOwnerEntry) only while wideIDsAllowed:
// a member of an older release would stop at an entry kind it does not
// know, so without it the announcement is left out (the stale connection
// elsewhere then ends with its session or its client). w, if not nil,
// learns when the announcement is applied here, as a proposal's waiter
// (the entry's Origin finds it; the entry is the same), or that it was
// not made (errNotAnnounced) or not committed.
func (n *Node) AnnounceSession(id int64, w backend.Waiter) {
	if n.fwd == nil {
		notAnnounced(w)
		return
	}
	e := sessionOwnerEntry(id, n.cfg.ID)
	if e.Kind == kindSessionOwnerWide && !n.wideIDsAllowed() {
		n.log.Warn("session move not announced: this member's id needs every member on a release that reads wide ids",
			zap.Int64("serverId", n.cfg.ID))
		notAnnounced(w)
		return
	}
	n.propose(e, w)
}

// errNotAnnounced fails the waiter of a session move AnnounceSession
// leaves out (a lone member, or a wide id older members cannot read).
var errNotAnnounced = errors.New("ensemble: session move not announced")

// notAnnounced tells w, if any, that its announcement was not made.
func notAnnounced(w backend.Waiter) {
	if w != nil {
		w.Failed(errNotAnnounced)
	}
}

func (n *Node) propose(e entry, w backend.Waiter) {
	select {
	case <-n.done:
		if w != nil {
			w.Failed(ErrClosed)
		}
		return
	default:
	}
	if a, ok := w.(backend.Abandoner); ok && a.Abandoned() {
		w.Failed(fmt.Errorf("ensemble: requester gone"))
		return
	}
	if w != nil {
		e.Origin = n.runID | uint64(n.seq.Add(1))
		if !n.waiters.put(e.Origin, w) {
			return
		}
	}
	enc := jute.Writer{Buf: make([]byte, 0, e.encodedSize())}
	e.encode(&enc)
	if n.fwd == nil || n.IsLeader() {
		n.applyLocal(enc.Buf, e.Origin)
		return
	}
	origin := e.Origin
	n.fwd.call(msgApply, enc.Buf, func(status byte, payload []byte, err error) {
		if err == nil && status == statusOK {
			return // the FSM completes the waiter when the entry arrives here
		}
		if errors.Is(err, errLeaderHere) {
			// Elected while waiting for a leader (the old one died). The
			// forwarder's lock is held, so this session's later proposals
			// still follow this one.
			n.applyLocal(enc.Buf, origin)
			return
		}
		if err == nil {
			err = fmt.Errorf("ensemble: leader refused: %s", payload)
		}
		n.failWaiter(origin, err)
	})
}

// applyLocal appends an encoded entry on this member, the leader; a
// failure reaches the waiter through watchFailures.
func (n *Node) applyLocal(data []byte, origin uint64) {
	_ = n.admit(data, nil) // encoded here: stamping cannot fail
	n.proposals.record(len(data))
	f := n.raft.Apply(data, 0)
	select {
	case n.pending <- pending{f: f, origin: origin}:
		select {
		case <-n.done: // closing: watchFailures may be gone already
			n.failWaiter(origin, ErrClosed)
		default:
		}
	case <-n.done:
		n.failWaiter(origin, ErrClosed)
	}
}

// failWaiter reports err to origin's waiter, unless it was completed.
func (n *Node) failWaiter(origin uint64, err error) {
	if w := n.waiters.take(origin); w != nil {
		w.Failed(err)
	}
}

// ProposeWait proposes txn and waits for its result.
func (n *Node) ProposeWait(txn *znode.Txn) (*znode.Result, error) {
	w := &syncWaiter{done: make(chan struct{})}
	n.Propose(txn, w)
	<-w.done
	return w.res, w.err
}

// syncWaiter is a Waiter for callers that block.
type syncWaiter struct {
	res  *znode.Result
	err  error
	done chan struct{}
}

func (s *syncWaiter) Applied(res *znode.Result, _ *znode.Tree) { s.res = res; close(s.done) }
func (s *syncWaiter) Failed(err error)                         { s.err = err; close(s.done) }

// watchFailures waits on every local proposal's future in log order and
// reports the ones that failed to their waiters. Successful ones were
// already completed by the FSM.
//
// It is not one of the goroutines Close waits for: hashicorp/raft leaves
// some futures unresolved when it shuts down (those still in its apply
// queue or on their way to the FSM), and waiting on one would hang Close.
// Close fails every remaining waiter itself (waiters.stop).
func (n *Node) watchFailures() {
	for {
		select {
		case p := <-n.pending:
			if err := p.f.Error(); err != nil {
				n.failWaiter(p.origin, fmt.Errorf("ensemble: proposal not committed: %w", err))
			} else {
				n.proposals.committed.Add(1)
			}
		case <-n.done:
			return
		}
	}
}
