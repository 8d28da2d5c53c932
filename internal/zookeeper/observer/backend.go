package observer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/internal/zookeeper/datadir"
	"github.com/zkraft/zkraft/internal/zookeeper/learner"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/watches"
	"github.com/zkraft/zkraft/znode"
)

// ErrRequesterGone fails a write whose connection closed before it was
// forwarded: it is not sent.
var ErrRequesterGone = errors.New("observer: requester gone")

// Backend serves a followed ZooKeeper ensemble to package session (it
// implements backend.Backend and backend.Revalidator).
type Backend struct {
	l   *learner.Learner
	id  int64
	log *zap.Logger
	reg *watches.Registry
	// wait bounds the waits of a handshake (createSession, REVALIDATE).
	wait time.Duration

	hooks atomic.Pointer[backend.Hooks]
	// onLost is Run's: the server drops its clients (Thaw calls it too).
	onLost atomic.Pointer[func()]
	// members are the ensemble's servers (SetMembers), set before
	// serving and read only after.
	members []backend.Peer
	// cxid numbers forwarded requests: the leader hands back (session,
	// cxid), which must not repeat among a session's requests in flight.
	cxid atomic.Int32

	mu sync.Mutex
	// ids are each session's identities, as its connection last set
	// them (znode.OpSetIdentities), sent with every request it forwards.
	ids map[int64][]jute.Id
	// timeouts are the sessions this server holds, for its ping replies.
	timeouts map[int64]int32

	// ho is the state of a cutover (handover.go).
	ho handover
}

// New returns a Backend following the ensemble cfg names, starting from
// the tree saved in state (learner.Learner.SaveState), or from
// nothing when state is nil. cfg.OnApply is the Backend's. Call Run.
func New(cfg learner.Config, state io.Reader) (*Backend, error) {
	b := &Backend{
		id: cfg.ID, log: cfg.Logger, reg: watches.New(), wait: cfg.InitTimeout,
		ids: make(map[int64][]jute.Id), timeouts: make(map[int64]int32),
	}
	b.ho.init()
	if b.log == nil {
		b.log = zap.NewNop()
	}
	if b.wait == 0 {
		b.wait = 20 * time.Second
	}
	cfg.OnApply = b.applied
	if state == nil {
		b.l = learner.New(cfg)
		return b, nil
	}
	l, err := learner.Resume(cfg, state)
	if err != nil {
		return nil, fmt.Errorf("observer: %w", err)
	}
	b.l = l
	return b, nil
}

// Learner is the Learner following the ensemble.
func (b *Backend) Learner() *learner.Learner { return b.l }

// Run follows the ensemble until ctx ends (learner.Learner.Run). When
// the connection to the leader ends, onLost (if set) runs: ZooKeeper's
// observers close their clients' connections then, and so must the
// server, since a resync may replace the tree without firing its
// watches; the clients reconnect, and their SetWatches catch them up.
func (b *Backend) Run(ctx context.Context, onLost func()) error {
	if onLost != nil {
		b.onLost.Store(&onLost)
		// Counted here, not in the goroutine: one scheduled late, after a
		// first connection synced and ended, would count that loss as
		// already seen and never report it.
		go b.watchLeader(ctx, onLost, endedSyncs(b.l.Status()))
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-b.ho.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	for {
		err := b.l.Run(ctx)
		if !errors.Is(err, learner.ErrStopped) {
			if b.HandedOver() {
				return nil
			}
			return err
		}
		// Stopped for a cutover: follow again if it is called off.
		if _, err := b.l.WaitFor(ctx, func(st learner.Status) bool { return !st.Stopped }); err != nil {
			if b.HandedOver() {
				return nil
			}
			return ctx.Err()
		}
	}
}

// watchLeader calls onLost each time a synced connection ends, beyond the
// ended ones Run counted, once for those that ended since it last looked.
// It counts them (the syncs completed, less the one still on) rather than
// waiting to see each connection synced: one that ends before this
// goroutine sees it synced must be reported too. Ends while a cutover is
// frozen, and StopAt's own whenever seen, are not reported (a Thaw drops
// the clients if the tree was replaced meanwhile).
func (b *Backend) watchLeader(ctx context.Context, onLost func(), ended int) {
	for {
		st, err := b.l.WaitFor(ctx, func(st learner.Status) bool { return endedSyncs(st) > ended })
		if err != nil {
			return
		}
		ended = endedSyncs(st)
		if !b.ho.active.Load() && int64(ended) > b.ho.intended.Load() {
			onLost()
		}
	}
}

// endedSyncs counts the synced connections that have ended.
func endedSyncs(st learner.Status) int {
	if st.Synced {
		return st.Syncs - 1
	}
	return st.Syncs
}

// applied runs for each transaction the learner applies, with its lock
// held: it fires the watches, and closes the connection of a session the
// ensemble closed.
func (b *Backend) applied(t datadir.Txn, results []*znode.Result, _ *znode.Tree) {
	for _, res := range results {
		for _, ev := range res.Events {
			b.reg.Trigger(ev.Path, ev.Type, t.Zxid, ev.ACL)
		}
	}
	if t.Type == jute.OpCloseSession {
		b.mu.Lock()
		delete(b.ids, t.ClientID)
		delete(b.timeouts, t.ClientID)
		b.mu.Unlock()
		if h := b.hooks.Load(); h != nil && h.SessionClosed != nil {
			h.SessionClosed(t.ClientID)
		}
	}
}

// ID is this observer's server id.
func (b *Backend) ID() int64 { return b.id }

// Mode is "observer".
func (b *Backend) Mode() string { return "observer" }

// HasQuorum reports whether the observer is up to date with ZooKeeper's
// leader, and so serves clients.
func (b *Backend) HasQuorum() bool { return b.l.Synced() || b.ho.active.Load() }

// LastZxid is the zxid of the last of ZooKeeper's transactions applied.
func (b *Backend) LastZxid() int64 { return b.l.LastZxid() }

// RLockTree returns the followed tree, read-locked.
func (b *Backend) RLockTree() *znode.Tree { return b.l.RLockTree() }

// RUnlockTree releases RLockTree's lock.
func (b *Backend) RUnlockTree() { b.l.RUnlockTree() }

// Watches is the registry the followed stream fires.
func (b *Backend) Watches() *watches.Registry { return b.reg }

// SetHooks sets what runs when a session is closed.
func (b *Backend) SetHooks(h backend.Hooks) { b.hooks.Store(&h) }

// AnnounceSession announces nothing (w, if any, fails with
// errNotAnnounced): a session moves to an observer by REVALIDATE
// (Revalidate), before its handshake completes.
func (b *Backend) AnnounceSession(_ int64, w backend.Waiter) {
	if w != nil {
		w.Failed(errNotAnnounced)
	}
}

// errNotAnnounced fails the waiter of AnnounceSession: an observer's
// sessions move by REVALIDATE, not by announcement.
var errNotAnnounced = errors.New("observer: session moves are not announced")
