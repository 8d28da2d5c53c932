package ensemble

import (
	"errors"
	"fmt"
	"time"

	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.uber.org/zap"
)

// The stable store's keys for the level a member's data directory was
// formed at, and when (unix ns). A directory without them was formed by
// zkraft v0.1 (or joined an ensemble): its ensemble stays at the level
// its log says until the operator raises it (RaiseLevel).
var (
	keyFormedLevel = []byte("zkraftFormedLevel")
	keyFormedAt    = []byte("zkraftFormedAt")
)

// formation reads the data directory's formation marks, first writing them
// when forming is set (a first start that bootstraps a new ensemble).
func formation(store *raftboltdb.BoltStore, forming bool) (level uint8, at int64, err error) {
	if forming {
		if err := markFormation(store); err != nil {
			return 0, 0, err
		}
	}
	l, err := store.GetUint64(keyFormedLevel)
	if err != nil {
		return 0, 0, nil // not found: formed before levels
	}
	a, _ := store.GetUint64(keyFormedAt)
	if l > 255 {
		return 0, 0, fmt.Errorf("ensemble: raft.db: formation level %d", l)
	}
	return uint8(l), int64(a), nil
}

// formingLevel is the level a new ensemble is formed at: BinaryLevel
// (tests form level-1 ensembles, as zkraft v0.1 did, with 0).
var formingLevel uint64 = BinaryLevel

// markFormation records that this directory forms a new ensemble at
// formingLevel now.
func markFormation(store *raftboltdb.BoltStore) error {
	if formingLevel == 0 {
		return nil
	}
	if err := store.SetUint64(keyFormedAt, uint64(time.Now().UnixNano())); err != nil {
		return fmt.Errorf("ensemble: raft.db: mark the formation: %w", err)
	}
	if err := store.SetUint64(keyFormedLevel, formingLevel); err != nil {
		return fmt.Errorf("ensemble: raft.db: mark the formation: %w", err)
	}
	return nil
}

// formEnsemble writes, as leader, the level a new ensemble was formed at
// and its id, once: the first leader of an ensemble formed by this build
// does it within moments of its election. It returns at once on a member
// formed before levels (an upgrade: RaiseLevel).
func (n *Node) formEnsemble() {
	defer n.wg.Done()
	want := n.ident.formedLevel
	for want >= 2 && n.fsm.ensemble().level() < want {
		// A leader first applies everything before its term (a restarted
		// member's log may already hold the level), then decides.
		if n.raftSet.Load() && n.IsLeader() && n.raft.Barrier(5*time.Second).Error() == nil &&
			n.fsm.ensemble().level() < want {
			if err := n.proposeLevel(want); err != nil && !errors.Is(err, ErrClosed) {
				n.log.Debug("ensemble id not written yet", zap.Error(err))
			}
		}
		select {
		case <-n.done:
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// proposeLevel proposes, as leader, raising the ensemble to level (with a
// new id if it has none) and waits until it is applied here.
func (n *Node) proposeLevel(level uint8) error {
	id := n.fsm.ensemble().ID
	if id.IsZero() {
		var err error
		if id, err = newEnsembleID(); err != nil {
			return err
		}
	}
	w := &syncWaiter{done: make(chan struct{})}
	n.propose(entry{Kind: kindEnsemble, Level: level, ID: id, Minted: time.Now().UnixNano()}, w)
	select {
	case <-w.done:
		return w.err
	case <-n.done:
		return ErrClosed
	}
}
