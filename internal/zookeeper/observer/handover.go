package observer

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/internal/zookeeper/learner"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// A live migration's cutover (zkraft migrate cutover), as the observer
// sees it:
//
//  1. Freeze: writes, session creations and syncs are held here, not
//     forwarded, and those in flight are answered; reads go on.
//  2. StopAt: the learner applies ZooKeeper's stream up to the zxid every
//     observer holds, and stops following there.
//  3. Handover: the new zkraft ensemble's member, seeded with this tree,
//     takes the connections' identities and the held requests, in order,
//     and every later request this Backend is still handed. The server
//     then serves the member (session.Server.SwitchBackend).
//
// Thaw and Resume call the cutover off before Handover: the held
// requests go to ZooKeeper's leader, and the learner follows again.

// Successor is the backend a Backend hands its requests to after the
// cutover (an *ensemble.Node).
type Successor interface {
	Propose(txn *znode.Txn, w backend.Waiter)
	Barrier(w backend.Waiter)
	Reconfig(req *jute.ReconfigRequest, ids []jute.Id, w backend.Waiter)
	TouchSession(id int64)
}

// held is a request held during a cutover: a write (txn) or a barrier.
type held struct {
	txn *znode.Txn
	w   backend.Waiter
}

type handover struct {
	mu sync.Mutex
	// frozen holds requests back; inflight counts those forwarded and
	// not yet answered, and drained is signaled when it falls to 0.
	frozen   bool
	inflight int
	drained  *sync.Cond
	held     []held
	// gen counts Freezes: a Thaw's release ends if a Freeze came since.
	gen int
	// replaced is the learner's count of replaced trees when the first
	// Freeze of a cutover came: a loss while frozen is not reported to
	// the server (its clients are kept), so a Thaw drops the clients if
	// a resync since replaced the tree without watch events.
	replaced int
	next     Successor
	// active is set from Freeze until Thaw: the learner's stopping is
	// not a lost leader, and clients keep being served.
	active atomic.Bool
	// intended is the count of ended connections up to which the ends
	// were StopAt's own.
	intended atomic.Int64
	// successor is next, read without mu on the touch path.
	successor atomic.Pointer[successorRef]
	done      chan struct{} // closed by Handover
}

type successorRef struct{ Successor }

func (h *handover) init() {
	h.drained = sync.NewCond(&h.mu)
	h.done = make(chan struct{})
}

// hold keeps txn back while frozen, passes it on once handed over, and
// otherwise counts it in flight and lets it through (false).
func (b *Backend) hold(txn *znode.Txn, w backend.Waiter) bool {
	h := &b.ho
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.next != nil:
		h.next.Propose(txn, w)
		return true
	case txn.Type == znode.OpSetIdentities:
		return false // kept here, answered at once; Handover proposes them
	case h.frozen:
		c := *txn
		c.Req = append([]byte(nil), txn.Req...)
		h.held = append(h.held, held{txn: &c, w: w})
		return true
	}
	h.inflight++
	return false
}

// holdBarrier is hold for a barrier.
func (b *Backend) holdBarrier(w backend.Waiter) bool {
	h := &b.ho
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.next != nil:
		h.next.Barrier(w)
		return true
	case h.frozen:
		h.held = append(h.held, held{w: w})
		return true
	}
	h.inflight++
	return false
}

// holdReconfig is hold for a reconfig: passed on once handed over,
// refused as ReconfigInProgress while frozen (the cutover is a change of
// membership itself; a Thaw unfreezes once it has released what it
// held), and otherwise let through (false).
func (b *Backend) holdReconfig(req *jute.ReconfigRequest, ids []jute.Id, w backend.Waiter) bool {
	h := &b.ho
	h.mu.Lock()
	next, frozen := h.next, h.frozen
	if next == nil && !frozen {
		h.inflight++
	}
	h.mu.Unlock()
	switch {
	case next != nil:
		next.Reconfig(req, ids, w)
	case frozen:
		// Answered outside h.mu: the learner's lock is taken before it
		// where a forwarded request is answered.
		t := b.l.RLockTree()
		w.Applied(&znode.Result{Zxid: t.LastZxid(), Err: jute.ErrReconfigInProgress}, t)
		b.l.RUnlockTree()
	default:
		return false
	}
	return true
}

// answered notes that a forwarded request was answered.
func (b *Backend) answered() {
	h := &b.ho
	h.mu.Lock()
	h.inflight--
	if h.inflight == 0 {
		h.drained.Broadcast()
	}
	h.mu.Unlock()
}

func (b *Backend) successor() Successor {
	if r := b.ho.successor.Load(); r != nil {
		return r.Successor
	}
	return nil
}

// Freeze holds every later write, session creation and sync, and waits
// until those forwarded already are answered (or ctx ends). It returns
// the last zxid applied then.
func (b *Backend) Freeze(ctx context.Context) (int64, error) {
	h := &b.ho
	replaced := b.l.Status().Replaced // not under h.mu: the learner's lock is taken first elsewhere
	h.mu.Lock()
	if h.next != nil {
		h.mu.Unlock()
		return 0, fmt.Errorf("observer: handed over already")
	}
	if !h.active.Load() {
		h.replaced = replaced
	}
	h.frozen = true
	h.gen++
	h.active.Store(true)
	stop := context.AfterFunc(ctx, func() {
		h.mu.Lock()
		h.drained.Broadcast()
		h.mu.Unlock()
	})
	defer stop()
	for h.inflight > 0 && ctx.Err() == nil {
		h.drained.Wait()
	}
	h.mu.Unlock()
	if ctx.Err() != nil {
		return 0, fmt.Errorf("observer: requests in flight to ZooKeeper's leader: %w", ctx.Err())
	}
	return b.l.LastZxid(), nil
}

// StopAt makes the learner stop following once it has applied zxid and
// waits until it has (learner.Learner.StopAt). It fails if the
// learner is past zxid, or stopped short of it.
func (b *Backend) StopAt(ctx context.Context, zxid int64) error {
	if err := b.l.StopAt(zxid); err != nil {
		return err
	}
	st, err := b.l.WaitFor(ctx, func(st learner.Status) bool { return st.Stopped })
	if err != nil {
		return fmt.Errorf("observer: waiting to reach %#x: %w", zxid, err)
	}
	// The connection synced as number st.Syncs ends on purpose: not a
	// lost leader, whenever watchLeader sees it.
	b.ho.intended.Store(int64(st.Syncs))
	if b.l.LastZxid() != zxid {
		return fmt.Errorf("observer: stopped at %#x, not %#x (last sync: %s)", b.l.LastZxid(), zxid, st.LastSync)
	}
	return nil
}

// Thaw calls a cutover off before Handover: the learner follows again
// (if StopAt stopped it), and once it is up to date with ZooKeeper's
// leader (or after thawWait) the held requests are forwarded in order
// and clients are served as before. Until then the server keeps its
// clients, as while frozen.
func (b *Backend) Thaw() {
	before := b.l.Status()
	stopped := before.Stopped
	b.l.Unstop()
	b.ho.mu.Lock()
	gen, replaced := b.ho.gen, b.ho.replaced
	b.ho.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), thawWait)
		defer cancel()
		// Stopped, the learner needs a new connection synced: the old
		// one's Synced may linger until its teardown.
		st, _ := b.l.WaitFor(ctx, func(st learner.Status) bool { return st.Synced && (!stopped || st.Syncs > before.Syncs) })
		if st.Replaced > replaced {
			// A SNAP (or TRUNC) since the freeze replaced the tree
			// without watch events, and the loss before it was not
			// reported: the clients reconnect, and their SetWatches
			// fire what they missed.
			if f := b.onLost.Load(); f != nil {
				(*f)()
			}
		}
		if stopped {
			// A new connection to the leader: it takes the sessions'
			// requests from it only once they are revalidated there
			// (else SessionMoved), as after a client's move.
			b.revalidateAll(ctx)
		}
		b.release(gen)
	}()
}

// thawWait bounds Thaw's wait for the learner to follow again.
const thawWait = 30 * time.Second

// revalidateAll revalidates every session held here with the leader,
// and closes the connection of one the leader no longer knows.
func (b *Backend) revalidateAll(ctx context.Context) {
	b.mu.Lock()
	sessions := make(map[int64]int32, len(b.timeouts))
	for id, timeout := range b.timeouts {
		sessions[id] = timeout
	}
	b.mu.Unlock()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for id, timeout := range sessions {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			ok, err := b.l.Revalidate(ctx, id, timeout)
			if err == nil && !ok {
				if h := b.hooks.Load(); h != nil && h.SessionClosed != nil {
					h.SessionClosed(id)
				}
			}
		}()
	}
	wg.Wait()
}

// release forwards the held requests and lets later ones through.
func (b *Backend) release(gen int) {
	h := &b.ho
	for {
		h.mu.Lock()
		if h.next != nil || h.gen != gen { // handed over, or frozen again
			h.mu.Unlock()
			return
		}
		batch := h.held
		h.held = nil
		if len(batch) == 0 { // later requests go straight through
			h.frozen = false
			h.active.Store(false)
			h.mu.Unlock()
			return
		}
		h.inflight += len(batch)
		h.mu.Unlock()
		// Forwarded without the lock (a failed send answers at once);
		// requests meanwhile are held still, behind these.
		for _, x := range batch {
			if x.txn == nil {
				b.barrier(x.w)
			} else {
				b.propose(x.txn, x.w)
			}
		}
	}
}

// Handover hands next, the new ensemble's member, what the server's
// connections need it to have, then every request held and every later
// one: first each session's identities (OpSetIdentities, which its
// writes name by key), then the held requests in the order they came.
// Call it after StopAt.
func (b *Backend) Handover(next Successor) {
	h := &b.ho
	h.mu.Lock()
	defer h.mu.Unlock()
	b.mu.Lock()
	now := time.Now().UnixMilli()
	for session, ids := range b.ids {
		next.Propose(&znode.Txn{Type: znode.OpSetIdentities, Session: session, Time: now, Ids: ids}, identitiesLogger{b.log, session})
	}
	b.mu.Unlock()
	for _, x := range h.held {
		if x.txn == nil {
			next.Barrier(x.w)
		} else {
			next.Propose(x.txn, x.w)
		}
	}
	h.held, h.frozen, h.next = nil, false, next
	h.successor.Store(&successorRef{next})
	close(h.done)
}

// HandedOver reports whether Handover has run.
func (b *Backend) HandedOver() bool { return b.successor() != nil }

// identitiesLogger reports a session's identities the new ensemble did
// not take: that session's writes then fail there.
type identitiesLogger struct {
	log     *zap.Logger
	session int64
}

func (l identitiesLogger) Applied(res *znode.Result, _ *znode.Tree) {
	if res.Err != jute.OK {
		l.Failed(res.Err)
	}
}

func (l identitiesLogger) Failed(err error) {
	l.log.Warn("a session's identities did not reach the new ensemble", zap.String("session", fmt.Sprintf("%#x", l.session)), zap.Error(err))
}
