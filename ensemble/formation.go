package ensemble

import (
	"errors"
	"fmt"
	"time"

	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.uber.org/zap"
)

// The stable store's keys for the level a member's data directory was
// formed at, when (unix ns), and the last zxid of the state it was formed
// with (0, or a seed's index). A directory without them was formed by
// zkraft v0.1 (or joined an ensemble): its ensemble stays at the level
// its log says until the operator raises it (RaiseLevel).
var (
	keyFormedLevel = []byte("zkraftFormedLevel")
	keyFormedAt    = []byte("zkraftFormedAt")
	keyFormedZxid  = []byte("zkraftFormedZxid")
)

// formationMarks are a data directory's formation keys.
type formationMarks struct {
	level uint8
	at    int64
	zxid  int64
}

// formation reads the data directory's formation marks, first writing them
// when forming is set (a first start that bootstraps a new ensemble).
func formation(store *raftboltdb.BoltStore, forming bool) (formationMarks, error) {
	if forming {
		if err := markFormation(store, 0); err != nil {
			return formationMarks{}, err
		}
	}
	l, err := store.GetUint64(keyFormedLevel)
	if err != nil {
		return formationMarks{}, nil // not found: formed before levels
	}
	a, _ := store.GetUint64(keyFormedAt)
	z, _ := store.GetUint64(keyFormedZxid)
	if l > 255 {
		return formationMarks{}, fmt.Errorf("ensemble: raft.db: formation level %d", l)
	}
	return formationMarks{level: uint8(l), at: int64(a), zxid: int64(z)}, nil
}

// formingLevel is the level a new ensemble is formed at: BinaryLevel
// (tests form level-1 ensembles, as zkraft v0.1 did, with 0).
var formingLevel uint64 = BinaryLevel

// markFormation records that this directory forms a new ensemble at
// formingLevel now, from a state whose last zxid is zxid.
func markFormation(store *raftboltdb.BoltStore, zxid int64) error {
	if formingLevel == 0 {
		return nil
	}
	for _, kv := range []struct {
		k []byte
		v uint64
	}{{keyFormedAt, uint64(time.Now().UnixNano())}, {keyFormedZxid, uint64(zxid)}, {keyFormedLevel, formingLevel}} {
		if err := store.SetUint64(kv.k, kv.v); err != nil {
			return fmt.Errorf("ensemble: raft.db: mark the formation: %w", err)
		}
	}
	return nil
}

// formationPending reports whether this member's ensemble is a new one
// whose level entry is still to be written: formed by this build (the
// marks), and with nothing applied beyond the state it was formed with
// but the first leader's membership (fsm.history).
// A member formed fresh that found an older ensemble (started late, or
// put in place of a broken member of a level-1 ensemble) applies that
// ensemble's history instead, and leaves its level alone: only the
// operator raises a running ensemble (RaiseLevel), and a level-1 one may
// hold zkraft v0.1 members.
func (n *Node) formationPending() bool {
	want := n.ident.formed.level
	return want >= 2 && n.fsm.ensemble().level() < want && !n.fsm.history.Load()
}

// formEnsemble writes, as leader, the level a new ensemble was formed at
// and its id, once (formationPending): the first leader of an ensemble
// formed by this build does it before it serves (waitReady), and this
// covers a leader elected after that one failed to. It returns at once on
// a member formed before levels (an upgrade: RaiseLevel).
func (n *Node) formEnsemble() {
	defer n.wg.Done()
	for n.formationPending() {
		// A leader first applies everything before its term (a restarted
		// member's log may already hold the level), then decides.
		if n.raftSet.Load() && n.IsLeader() && n.await(n.raft.Barrier(5*time.Second)) == nil && n.formationPending() {
			if err := n.proposeLevel(n.ident.formed.level); err != nil && !errors.Is(err, ErrClosed) {
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

// formed reports whether this member may serve as far as its formation
// goes: a member of an ensemble formed by this build serves only once the
// formation's level entry is applied, so it precedes every client's
// transaction (their zxids do not depend on when it lands). A leader
// writes it first (lead).
func (n *Node) formed(lead bool) bool {
	if !n.formationPending() {
		return true
	}
	if lead {
		_ = n.proposeLevel(n.ident.formed.level)
	}
	return !n.formationPending()
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
