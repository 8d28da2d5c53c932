package ensemble

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/backend/audit"
	"github.com/zkraft/zkraft/internal/base/stagetrace"

	"github.com/hashicorp/raft"
	"go.uber.org/zap"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/watches"
	"github.com/zkraft/zkraft/znode"
)

// fsm applies log entries to the tree. Contract (hashicorp/raft): Apply and
// Snapshot are called from one goroutine, never concurrently with each other;
// Persist of a returned snapshot may run concurrently with Apply. Apply is
// deterministic: it reads neither the clock nor randomness.
type fsm struct {
	log      *zap.Logger
	opts     znode.Options
	watches  *watches.Registry
	waiters  *waiters
	tracker  *expiry
	hooks    atomic.Pointer[backend.Hooks]
	lastZxid atomic.Int64
	// audit, when set, logs the ephemerals a closed or expired session
	// takes with it, as auditUser (Config.AuditUser).
	audit     *zap.Logger
	auditUser string

	// applied, if set, runs after each batch (outside the tree lock) with
	// the batch's last index and whether it held anything but commit
	// nudges (see nudge.go).
	applied func(last uint64, work bool)

	// durable, if set, waits until a log index may be applied: it is on
	// this member's disk, or a leader's commit index covers it
	// (asynclog.go). An error means it never will be: the log failed.
	durable func(index uint64) error

	// stop is called, outside the tree lock, when an entry cannot be made
	// durable, decoded or applied; it returns only once the member is
	// closing, and the FSM applies nothing after it (nil: panic). The
	// entry is neither applied nor answered: no member may skip an entry
	// or go on from a state it cannot trust.
	stop func(error)

	// applicable, if set, runs once a batch may be applied and before it
	// is (the leader's early commit notices, nudge.go).
	applicable func(logs []*raft.Log)

	// mu guards tree: the write lock is held while applying, the read lock
	// by every local read.
	mu   sync.RWMutex
	tree *znode.Tree
	// dec decodes the entries applied (under mu's write lock); their
	// transactions alias the entries' data, which the tree copies from.
	dec znode.TxnDecoder

	restores atomic.Int64 // snapshots installed over the state (tests)
	// running is set once Raft has started: a snapshot restored before
	// is the member's own (at start), one after it a leader's.
	running atomic.Bool
	// newestSnapshot, if set, returns the newest snapshot's metadata
	// (for the "snapshot installed" line).
	newestSnapshot func() (raft.SnapshotMeta, bool)
	// snapshotTook, if set, is told each snapshot's duration (Metrics.Snapshot).
	snapshotTook func(backend.SnapshotKind, time.Duration)
	// applyWait, if set, is told how long each batch waited for the tree's
	// write lock (Metrics.ApplyWait).
	applyWait func(time.Duration)

	// size counts the log applied since the last snapshot (logsize.go).
	size *logSize

	// ens is the ensemble's level and id as the log set them (level.go):
	// changed by Apply and Restore, read by the member port's handshakes.
	ens atomic.Pointer[ensembleState]
	// history is set once this member applies a client's transaction, or
	// restores a snapshot past formedZxid (the state its data directory
	// was formed with): its ensemble is not one still forming
	// (Node.formationPending).
	history    atomic.Bool
	formedZxid int64

	// stopped is set once halt ran: nothing more is applied (FSM goroutine).
	stopped bool
	// ownOptions are opts as entries carry them; warnedOptions the last
	// other options noteOptions warned of (FSM goroutine).
	ownOptions, warnedOptions znode.OptionBits
}

var _ raft.BatchingFSM = (*fsm)(nil)

func newFSM(log *zap.Logger, opts znode.Options, reg *watches.Registry, w *waiters, tr *expiry) *fsm {
	return &fsm{log: log, opts: opts, watches: reg, waiters: w, tracker: tr, tree: znode.NewTree(opts), size: newLogSize(0),
		ownOptions: opts.Bits()}
}

// Apply implements raft.FSM.
func (f *fsm) Apply(l *raft.Log) interface{} {
	return f.ApplyBatch([]*raft.Log{l})[0]
}

// ApplyBatch implements raft.BatchingFSM: the whole batch is applied under
// one acquisition of the tree lock.
func (f *fsm) ApplyBatch(logs []*raft.Log) []interface{} {
	out := make([]interface{}, len(logs))
	if f.stopped {
		return out
	}
	work := false
	if stagetrace.On() && len(logs) > 0 {
		stagetrace.Mark(stagetrace.ApplyEnter, logs[len(logs)-1].Index)
	}
	if f.durable != nil && len(logs) > 0 {
		last := logs[len(logs)-1].Index
		if err := f.durable(last); err != nil {
			f.halt(fmt.Errorf("ensemble: log entries %d-%d are not durable here: %w", logs[0].Index, last, err))
			return out
		}
	}
	if stagetrace.On() && len(logs) > 0 {
		stagetrace.Mark(stagetrace.ApplyDurable, logs[len(logs)-1].Index)
	}
	if f.applicable != nil && len(logs) > 0 {
		f.applicable(logs)
	}
	var failed error
	f.lockTree()
	for i, l := range logs {
		if l.Type != raft.LogCommand {
			work = true // a configuration change: followers wait for it too
			continue
		}
		var nudge bool
		if out[i], nudge, failed = f.applyLocked(l); failed != nil {
			break
		}
		work = work || !nudge
	}
	f.mu.Unlock()
	if failed != nil {
		f.halt(failed)
		return out
	}
	f.size.add(logs)
	if stagetrace.On() && len(logs) > 0 {
		stagetrace.Mark(stagetrace.ApplyDone, logs[len(logs)-1].Index)
	}
	if f.applied != nil && len(logs) > 0 {
		f.applied(logs[len(logs)-1].Index, work)
	}
	return out
}

// lockTree takes the tree's write lock, telling applyWait how long that
// took. sync.RWMutex lets no new reader in once a writer waits, so the
// wait is at most the longest hold of the readers already inside.
func (f *fsm) lockTree() {
	if f.applyWait == nil {
		f.mu.Lock()
		return
	}
	start := time.Now()
	f.mu.Lock()
	f.applyWait(time.Since(start))
}

// halt stops the FSM for good after an entry could not be made durable,
// decoded or applied (see stop).
func (f *fsm) halt(err error) {
	f.stopped = true
	if f.stop == nil {
		panic(err)
	}
	f.stop(err)
}

// applyLocked applies one entry; nudge reports a commit nudge (a barrier
// nobody waits for), which changes nothing anyone can observe. An error
// means the entry was not applied and the member must stop: an entry this
// build cannot read (a bug, or a newer member's format in a rolling
// upgrade), or one whose apply broke the tree's invariants. Skipping it
// would let this member diverge from members that can apply it.
func (f *fsm) applyLocked(l *raft.Log) (res *znode.Result, nudge bool, err error) {
	e, err := decodeEntry(l.Data, &f.dec)
	if err != nil {
		return nil, false, fmt.Errorf("ensemble: log entry %d (term %d) cannot be decoded: %w", l.Index, l.Term, err)
	}
	zxid := int64(l.Index)
	switch e.Kind {
	case kindTxn:
		res = f.applyTxn(e.Txn, zxid)
		if res.Fault != nil {
			return nil, false, fmt.Errorf("ensemble: log entry %d (term %d) cannot be applied: %w", l.Index, l.Term, res.Fault)
		}
	case kindBarrier:
		if e.Origin == 0 && e.Code == jute.OK {
			return nil, true, nil
		}
		res = &znode.Result{Zxid: f.lastZxid.Load(), Err: e.Code}
	case kindSessionOwner, kindSessionOwnerWide:
		res = &znode.Result{Zxid: f.lastZxid.Load()}
		if h := f.hooks.Load(); h != nil && h.SessionMoved != nil {
			h.SessionMoved(e.Session, e.Member)
		}
	case kindEnsemble:
		if err := checkLevel(e.Level); err != nil {
			return nil, false, fmt.Errorf("ensemble: log entry %d (term %d): %w", l.Index, l.Term, err)
		}
		f.applyEnsemble(e, l.Index)
		res = &znode.Result{Zxid: f.lastZxid.Load()}
	}
	if w := f.waiters.take(e.Origin); w != nil {
		w.Applied(res, f.tree)
	}
	return res, false, nil
}

// applyTxn applies a znode transaction and its consequences: watch events
// and session bookkeeping.
func (f *fsm) applyTxn(txn *znode.Txn, zxid int64) *znode.Result {
	f.noteOptions(txn.Options)
	if txn.Type != jute.OpReconfig { // a new ensemble's leader writes its membership first
		f.history.Store(true)
	}
	res := f.tree.Apply(txn, zxid)
	for _, ev := range res.Events {
		f.watches.Trigger(ev.Path, ev.Type, zxid, ev.ACL)
	}
	// Published once its notifications are queued: a reply read off the
	// lock (an error's header) never carries a zxid whose events a client
	// has not been sent yet, which its resume's SetWatches would skip.
	f.lastZxid.Store(zxid)
	if f.audit != nil && txn.Type == jute.OpCloseSession && res.Err == jute.OK {
		f.auditEphemerals(txn.Session, res.Events)
	}
	switch txn.Type {
	case jute.OpCreateSession:
		if res.Err == jute.OK {
			f.tracker.add(txn.Session, txn.Timeout)
		}
	case jute.OpCloseSession:
		f.tracker.remove(txn.Session)
		if h := f.hooks.Load(); h != nil && h.SessionClosed != nil {
			h.SessionClosed(txn.Session)
		}
	}
	return res
}

// Snapshot implements raft.FSM. It runs on the FSM goroutine, so a view
// opened here is exactly the state at the last applied index. Persist
// streams the view while Apply carries on: the tree keeps the pre-image of
// each node changed meanwhile, and the walk holds the read lock for a
// chunk of nodes at a time, so no write waits for more than a chunk (there
// is no copy of the tree, and no pause proportional to its size).
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	if f.stopped {
		// Raft counts a halted batch as applied (runFSM moves its last
		// index past it), so a snapshot now would claim entries the tree
		// lacks, and a restart from it would never apply them.
		return nil, errHalted
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.size.reset()
	large := snapshotFootprint(f.tree.Stats()) >= releaseToOSAbove
	ens := f.ensemble()
	v, err := f.tree.BeginSnapshot()
	if err != nil {
		// Another view is still being written (not with Raft's one
		// snapshot at a time): fall back to a copy.
		return &treeSnapshot{tree: f.tree.Clone(), ens: ens, large: large, log: f.log, took: f.snapshotTook}, nil
	}
	return &treeSnapshot{view: v, fsm: f, ens: ens, large: large, log: f.log, took: f.snapshotTook}, nil
}

// releaseToOSAbove is the estimated tree size above which the memory a
// snapshot freed is handed back to the OS as soon as it is written.
const releaseToOSAbove = 64 << 20

// snapshotFootprint estimates a tree's memory: ~240 bytes per node (the
// compact tree's measured live heap per znode) plus the data.
func snapshotFootprint(st znode.Stats) int64 {
	return int64(st.Nodes)*256 + st.DataSize
}

// Restore implements raft.FSM: the tree is replaced by the snapshot's.
// Proposals still awaited on this member are failed: the entries the
// snapshot covers are never applied here, so nothing else would complete
// them (a follower catching up by snapshot; ZooKeeper likewise drops its
// clients' connections while it syncs with a leader).
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	f.restores.Add(1)
	start := time.Now()
	br := bufio.NewReaderSize(rc, 1<<16) // ReadSnapshot reads through it, up to the tree's trailer
	t, err := znode.ReadSnapshot(br, f.opts)
	if err != nil {
		return fmt.Errorf("ensemble: restore snapshot: %w", err)
	}
	ens, err := readEnsembleSection(br)
	if err != nil {
		return fmt.Errorf("ensemble: restore snapshot: %w", err)
	}
	f.logRestore(t, time.Since(start))
	if t.LastZxid() > f.formedZxid {
		f.history.Store(true)
	}
	f.mu.Lock()
	f.tree = t
	f.ens.Store(&ens)
	f.lastZxid.Store(t.LastZxid())
	if h := f.hooks.Load(); h != nil && h.TreeReplaced != nil {
		// Under the write lock: no client reads the new tree (and takes
		// its zxid as seen) on a connection whose watches it skipped; a
		// watch set from now on is set on the new tree.
		h.TreeReplaced()
	}
	f.mu.Unlock()
	f.size.reset()
	f.tracker.reset(t.Sessions) // on the FSM goroutine: nothing applies meanwhile
	f.waiters.failAll(errRestored)
	return nil
}

// errHalted refuses a snapshot of an FSM that stopped applying (halt).
var errHalted = errors.New("ensemble: the state machine stopped applying entries; no snapshot")

// errRestored fails the proposals awaited when a snapshot replaced the
// state: whether they were committed is unknown to this member.
var errRestored = errors.New("ensemble: state replaced by a leader's snapshot")

// treeSnapshot is the tree at one index awaiting persistence: a view of
// the live tree, or (rarely, see Snapshot) a copy.
type treeSnapshot struct {
	view  *znode.SnapshotView
	fsm   *fsm
	tree  *znode.Tree
	ens   ensembleState // written after the tree (level.go)
	large bool          // free memory goes back to the OS on Release
	log   *zap.Logger   // for "snapshot taken"
	took  func(backend.SnapshotKind, time.Duration)
}

// Persist implements raft.FSMSnapshot: the view (or copy) is streamed to
// the sink.
func (s *treeSnapshot) Persist(sink raft.SnapshotSink) error {
	start := time.Now()
	w := &countingWriter{w: sink}
	if err := s.write(w); err != nil {
		_ = sink.Cancel()
		return fmt.Errorf("ensemble: persist snapshot: %w", err)
	}
	if err := sink.Close(); err != nil {
		return fmt.Errorf("ensemble: persist snapshot: %w", err)
	}
	took := time.Since(start)
	if s.took != nil {
		s.took(backend.SnapshotTaken, took)
	}
	if s.log != nil {
		term, index := snapshotIDPosition(sink.ID())
		s.log.Info("snapshot taken", zap.Uint64("index", index), zap.Uint64("term", term),
			zap.Int64("bytes", w.n), zap.Int64("durationMs", took.Milliseconds()))
	}
	return nil
}

// write writes the snapshot to w through a 64 KiB buffer: the view's walk
// under the FSM's read lock a chunk at a time, or the copy's.
func (s *treeSnapshot) write(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	var err error
	if s.view != nil {
		err = s.view.WriteSnapshot(bw, s.fsm.mu.RLock, s.fsm.mu.RUnlock)
	} else {
		err = s.tree.WriteSnapshot(bw)
	}
	if err == nil {
		err = writeEnsembleSection(bw, s.ens)
	}
	if err == nil {
		err = bw.Flush()
	}
	return err
}

// Release implements raft.FSMSnapshot: the view is closed, so Apply stops
// keeping pre-images and drops those it kept. After a large tree's
// snapshot, the heap's free memory (the walk's copies of child sets, the
// pre-images, whatever garbage the writes before it left) goes back to the
// OS at once rather than over minutes: one forced collection per snapshot,
// and a large tree raises the snapshot threshold (tuneSnapshots), so these
// are rare. A small tree under a write load snapshots every second or two,
// and forcing a collection each time cost every write a pause.
func (s *treeSnapshot) Release() {
	if s.view != nil {
		s.fsm.mu.Lock()
		s.view.Close()
		s.fsm.mu.Unlock()
		s.view = nil
	}
	s.tree = nil
	if s.large {
		debug.FreeOSMemory()
	}
}

// auditEphemerals logs each ephemeral node a closed or expired session's
// end deleted (DataTree.deleteNodes under audit.enable).
func (f *fsm) auditEphemerals(session int64, events []znode.Event) {
	for _, ev := range events {
		if ev.Type == jute.EventNodeDeleted {
			audit.Log(f.audit, audit.Event{Session: "0x" + strconv.FormatUint(uint64(session), 16), User: f.auditUser,
				Operation: "ephemeralZNodeDeletionOnSessionCloseOrExpire", Znode: ev.Path, Result: "success"})
		}
	}
}
