package ensemble

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/ensemble/storage"

	"github.com/zkraft/zkraft/backend/audit"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"
	"go.uber.org/zap"

	"github.com/zkraft/zkraft/watches"
	"github.com/zkraft/zkraft/znode"
)

// ErrClosed is returned for proposals made after Close.
var ErrClosed = errors.New("ensemble: node closed")

// ErrStartCancelled is returned by Open when Config.Cancel closed while it
// waited for a leader.
var ErrStartCancelled = errors.New("ensemble: start cancelled while waiting for a leader")

// Node is one member of a zkraft ensemble.
type Node struct {
	cfg    Config
	logDir string // where raft.db and raft.journal are (logdir.go)
	// proposals are the sizes of the entries appended as leader (srvr).
	proposals *proposalStats
	fsyncs    *fsyncStats // the log syncs' times (fsyncstats.go)
	log       *zap.Logger
	raft      *raft.Raft
	store     *raftboltdb.BoltStore
	fsm       *fsm
	waiters   *waiters
	tracker   *expiry
	watches   *watches.Registry
	logs      *storage.LogCache
	snaps     raft.SnapshotStore
	trans     *appendTransport       // nil for a single member
	async     *storage.AsyncLogStore // Raft's log writes, off Raft's critical path
	journal   *storage.Journal       // makes them durable with one fdatasync
	mux       *mux                   // nil for a single member
	dialed    dialedConns            // the member connections it dialed (dialed.go)
	fwd       *forwarder             // nil for a single member
	touched   touchSet
	ident     *identity // the member port's handshakes, the ensemble's level and id (identity.go)

	fwdMu    sync.Mutex
	fwdConns map[net.Conn]struct{} // followers' forwarding connections (leader side); nil once closed
	nudges   chan struct{}         // a commit nudge is due (leader of an ensemble; see nudge.go)
	nudgeAt  atomic.Uint64         // the highest index a nudge was asked for
	// appliedAt is the last index the FSM applied and nudgeSkipped is set
	// when a nudge was skipped for a newer entry (nudge.go).
	appliedAt    atomic.Uint64
	nudgeSkipped atomic.Bool
	noticedAt    atomic.Uint64 // the highest index beforeApply sent notices for
	nudging      atomic.Bool   // nudges is ready and n.raft set
	leaderSince  atomic.Int64  // unix ns this member became leader, 0 when it does not lead
	// lostTerm is the last term in which this member lost its quorum as
	// leader, and quorumWake tells keepQuorum that it became leader;
	// leadTerm and leadFrom, guarded by leadMu, are the last term it led
	// and when it began leading in it (quorum.go).
	lostTerm   atomic.Uint64
	quorumWake chan struct{}
	leadMu     sync.Mutex
	leadTerm   uint64
	leadFrom   int64
	// leaderChanges counts the leaders this member has seen elected
	// (events.go); started is when Open began.
	leaderChanges atomic.Int64
	started       time.Time

	reconfigMu sync.Mutex // one reconfig at a time (leader)
	// stepping is set on a leader from the moment it proposes a
	// configuration without itself: its reconfig is complete once that
	// commits, and it takes no other, as a ZooKeeper leader removed by a
	// reconfig shuts down (reconfig.go).
	stepping atomic.Bool
	// reconfigured is the static membership a reconfig on this member
	// made (reconfig.go), nil before any; guarded by peersMu.
	peersMu      sync.Mutex
	reconfigured []backend.Peer

	// reloadMu serializes changes to Raft's reloadable config (snapshot
	// threshold, the heartbeat check of campaign.go).
	reloadMu sync.Mutex
	raftSet  atomic.Bool // n.raft is set (read by transport goroutines)
	// lostLeader carries the address of a leader whose append stream
	// ended to the campaign goroutine (leaderloss.go).
	lostLeader chan string

	optionBits znode.OptionBits // the tree options this member stamps as leader (admit.go)

	runID   uint64        // high bits of every origin this process proposes
	seq     atomic.Uint32 // low bits
	pending chan pending  // local proposals whose futures are checked for failure

	closeOnce sync.Once
	// closing is closed by BeginClose (Close's first step): nothing waits
	// for a leader to forward to after it.
	closing   chan struct{}
	beginOnce sync.Once
	fatalOnce sync.Once // fatal's one stop
	// unrecoverable counts fatal's stops (UnrecoverableErrors).
	unrecoverable atomic.Int64
	timings       timings // mntr's snapshot and election figures
	done          chan struct{}
	wg            sync.WaitGroup
}

// pending pairs a raft future with the origin of its waiter.
type pending struct {
	f      raft.ApplyFuture
	origin uint64
}

// Open starts a member: it opens (or creates) the data directory, joins or
// bootstraps the Raft group, replays the log over the latest snapshot and
// returns once this member has applied everything committed before it
// started and can serve.
func Open(cfg Config) (*Node, error) {
	cfg.setDefaults()
	if err := storage.PrivateDir(cfg.DataDir, cfg.Logger); err != nil {
		return nil, err
	}
	logDir, err := resolveLogDir(&cfg)
	if err != nil {
		return nil, err
	}
	if err := storage.PrivateDir(logDir, cfg.Logger); err != nil {
		return nil, err
	}
	for _, p := range []string{filepath.Join(cfg.DataDir, storage.SnapshotsDir), filepath.Join(logDir, storage.LogStoreFile), filepath.Join(logDir, storage.JournalFile)} {
		if err := storage.PrivateTree(p, cfg.Logger); err != nil {
			return nil, err
		}
	}
	if cfg.Watches == nil {
		cfg.Watches = watches.New()
	}
	n := &Node{
		logDir:    logDir,
		proposals: newProposalStats(),
		cfg:       cfg,
		log:       cfg.Logger,
		waiters:   newWaiters(),
		watches:   cfg.Watches,
		pending:   make(chan pending, 4096),
		done:      make(chan struct{}),
		closing:   make(chan struct{}),
		touched:   touchSet{m: make(map[int64]struct{})},
		fwdConns:  make(map[net.Conn]struct{}),

		lostLeader: make(chan string, 1),
		quorumWake: make(chan struct{}, 1),
		started:    time.Now(),
	}
	n.runID = randomRunID()
	n.optionBits = cfg.Tree.Bits()
	n.tracker = newExpiry()
	n.fsm = newFSM(n.log, cfg.Tree, n.watches, n.waiters, n.tracker)
	n.fsm.applied = n.afterApply
	n.fsm.size = newLogSize(cfg.SnapshotBytes)
	n.fsm.snapshotTook = n.timings.snapshotTook(cfg.Metrics.Snapshot)
	n.fsm.applyWait = cfg.Metrics.ApplyWait
	n.fsyncs = newFsyncStats(cfg.FsyncWarning, n.log)
	if cfg.AuditUser != "" {
		n.fsm.audit, n.fsm.auditUser = cfg.Logger.Named(audit.LoggerName), cfg.AuditUser
	}
	n.fsm.applicable = n.beforeApply
	n.fsm.stop = func(err error) {
		select {
		case <-n.done: // closing: Raft is stopping and applies nothing more
		default:
			n.fatal("cannot apply the Raft log; stopping", err)
		}
		<-n.done // apply nothing more until the member is closed
	}

	if err := n.startRaft(); err != nil {
		n.Close()
		return nil, err
	}
	if n.mux != nil {
		n.startNudger()
	}
	n.wg.Add(5)
	go n.formEnsemble()
	go n.watchEvents()
	go n.watchFailures()
	go n.expireSessions()
	go n.reap()
	go n.tuneSnapshots()
	if n.mux != nil {
		n.wg.Add(5)
		go n.acceptForward()
		go n.flushTouches()
		go n.watchLeadership()
		go n.campaign()
		go n.keepQuorum()
	}
	if err := n.waitReady(); err != nil {
		n.Close()
		return nil, err
	}
	return n, nil
}

func randomRunID() uint64 {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand does not fail on Linux; a time-based id is still unique enough.
		return uint64(time.Now().UnixNano()) << 32
	}
	return uint64(binary.BigEndian.Uint32(b[:])|1) << 32
}

// raftConfig derives Raft's settings. A lone member elects itself after a
// short fixed timeout; in an ensemble the heartbeat and election timeouts
// and the leader lease are all the patient ElectionTimeout (tickTime×
// syncLimit), and elections that must be quick start without a timer
// (timeouts.go).
func (n *Node) raftConfig() *raft.Config {
	rc := raft.DefaultConfig()
	rc.LocalID = raftID(n.cfg.ID)
	rc.Logger = newHCLogger(n.log, n.cfg.multi())
	// Snapshot as soon as snapCount entries have accumulated (checked every
	// 2s) and keep a tail for lagging followers (trailingLogs). Compaction
	// deletes the log up to the snapshot in one bolt write transaction,
	// which holds up appends: keeping each compaction to about snapCount
	// entries keeps that pause short, where a 30s check at 40k writes/s
	// had to delete a million entries at once (a multi-second stall).
	rc.SnapshotThreshold = n.cfg.SnapshotThreshold
	rc.SnapshotInterval = 2 * time.Second
	rc.TrailingLogs = trailingLogs(n.cfg.SnapshotThreshold) // and SnapshotBytes (tuneSnapshots)
	rc.HeartbeatTimeout = n.electionTimeout()
	rc.ElectionTimeout = n.electionTimeout()
	rc.LeaderLeaseTimeout = n.leaderLease()
	// Followers learn the commit index from the next AppendEntries; at
	// light load the leader sends one at once (nudge.go), so this timer is
	// only a fallback and an idle ensemble sends nothing but heartbeats.
	rc.CommitTimeout = n.cfg.CommitTimeout
	rc.MaxAppendEntries = 512
	rc.BatchApplyCh = true
	return rc
}

func (n *Node) startRaft() error {
	rc := n.raftConfig()
	if err := storage.CheckBoltFile(filepath.Join(n.logDir, storage.LogStoreFile)); err != nil {
		return err
	}
	store, err := raftboltdb.New(raftboltdb.Options{
		Path: filepath.Join(n.logDir, storage.LogStoreFile),
		// The freelist is rebuilt on open instead of written with every
		// transaction: less to fsync per group commit, same durability.
		BoltOptions: &bbolt.Options{Timeout: time.Second, NoFreelistSync: true, FreelistType: bbolt.FreelistMapType},
	})
	if err != nil {
		return fmt.Errorf("ensemble: open raft.db: %w", err)
	}
	n.store = store
	packed, err := storage.NewPackedLogStore(storage.ChunkedLogStore{LogStore: store})
	if err != nil {
		return err
	}
	packed.Fail = func(err error) { n.fatal("the Raft log is corrupt; stopping", err) }
	journal, err := storage.OpenJournal(filepath.Join(n.logDir, storage.JournalFile), n.cfg.JournalSize, packed, n.logFailed, n.log)
	if err != nil {
		return err
	}
	journal.NoSync = n.cfg.NoSync
	fsyncTook := n.cfg.Metrics.Fsync
	journal.Timing = func(d time.Duration, size int64) {
		n.fsyncs.record(d, size)
		if fsyncTook != nil {
			fsyncTook(d)
		}
	}
	n.journal = journal
	async, err := storage.NewAsyncLogStore(journal, n.logFailed)
	if err != nil {
		return err
	}
	n.async = async
	n.fsm.durable = func(idx uint64) error { return async.WaitApplicable(idx, n.done) }
	logs, err := storage.NewLogCache(async, storage.LogCacheEntries, storage.LogCacheBytes)
	if err != nil {
		return fmt.Errorf("ensemble: log cache: %w", err)
	}
	n.logs = logs
	files, err := raft.NewFileSnapshotStoreWithLogger(n.cfg.DataDir, 2, rc.Logger)
	if err != nil {
		return fmt.Errorf("ensemble: snapshot store: %w", err)
	}
	if err := storage.PrivateDir(filepath.Join(n.cfg.DataDir, storage.SnapshotsDir), n.log); err != nil {
		return err
	}
	snaps := storage.NewOrderedSnapshots(files, filepath.Join(n.cfg.DataDir, storage.SnapshotsDir), n.log)
	n.snaps = snaps
	n.fsm.newestSnapshot = func() (raft.SnapshotMeta, bool) {
		list, err := snaps.List()
		if err != nil || len(list) == 0 {
			return raft.SnapshotMeta{}, false
		}
		return *list[0], true // newest first
	}
	if err := snaps.Verify(); err != nil {
		return err
	}
	existing, err := raft.HasExistingState(logs, store, snaps)
	if err != nil {
		return fmt.Errorf("ensemble: inspect state: %w", err)
	}
	marks, err := formation(store, !existing && !n.cfg.Join)
	if err != nil {
		return err
	}
	n.ident = newIdentity(n, marks)
	n.fsm.formedZxid = marks.zxid
	trans, conf, err := n.transport(rc)
	if err != nil {
		return err
	}
	if !existing && !n.cfg.Join {
		// Every member bootstraps with the same static membership (zoo.cfg),
		// which Raft accepts as one configuration.
		if err := raft.BootstrapCluster(rc, logs, store, snaps, trans, conf); err != nil {
			return fmt.Errorf("ensemble: bootstrap: %w", err)
		}
	}
	// A failed term or vote write stops the member (Raft would panic).
	stable := storage.NewFailStopStable(store, func(err error) {
		n.fatal("cannot save Raft's term or vote; stopping", err)
	})
	r, err := raft.NewRaft(rc, n.fsm, logs, stable, snaps, trans)
	if err != nil {
		return fmt.Errorf("ensemble: start raft: %w", err)
	}
	n.raft = r
	n.raftSet.Store(true)
	n.fsm.running.Store(true) // a snapshot restored from now on is a leader's (events.go)
	return nil
}

// transport returns the Raft transport and the bootstrap configuration.
func (n *Node) transport(rc *raft.Config) (raft.Transport, raft.Configuration, error) {
	if !n.cfg.multi() {
		_, trans := raft.NewInmemTransport(raft.ServerAddress(rc.LocalID))
		return trans, n.cfg.membership(), nil
	}
	self, ok := n.cfg.self()
	if !ok {
		return nil, raft.Configuration{}, fmt.Errorf("ensemble: server id %d is not among the peers", n.cfg.ID)
	}
	ln, err := n.cfg.Listen(self.Addr)
	if err != nil {
		return nil, raft.Configuration{}, fmt.Errorf("ensemble: member port %s: %w", self.Addr, err)
	}
	n.mux = newMux(guardMemberPort(ln, &n.cfg, n.log), n.dialed.dialer(n.cfg.Dial), n.ident)
	if n.cfg.memberIdle != 0 {
		n.mux.idle.Store(int64(n.cfg.memberIdle))
	}
	n.fwd = newForwarder(n)
	const timeout = 10 * time.Second
	trans := newAppendTransport(raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream:  raftLayer{m: n.mux},
		MaxPool: 3,
		Timeout: timeout,
		Logger:  rc.Logger,
	}), n.mux, n.async, timeout)
	n.trans = trans
	trans.appendTook = n.cfg.Metrics.Append
	lost := n.leaderStreamLost
	trans.streamLost.Store(&lost)
	persist := n.keepDialing
	trans.persist.Store(&persist)
	unreachable := func(target string, err error, trying time.Duration) {
		n.log.Warn("cannot reach a member; still trying", zap.String("member", target),
			zap.Duration("for", trying.Round(time.Millisecond)), zap.Error(err))
	}
	trans.unreachable.Store(&unreachable)
	return trans, n.cfg.membership(), nil
}

// keepDialing reports whether the append transport should go on dialing
// target, a member it cannot reach: while this member leads and is not
// closing (Raft's shutdown waits for its replication goroutines, and Close
// closes done before it shuts Raft down), and while target is a member (a
// reconfig may have removed it).
func (n *Node) keepDialing(target string) bool {
	select {
	case <-n.done:
		return false
	default:
	}
	if !n.raftSet.Load() || n.raft.State() != raft.Leader {
		return false
	}
	members, _ := n.currentMembers()
	for _, p := range members {
		if p.Addr == target {
			return true
		}
	}
	return false
}

// waitReady blocks until there is a leader and this member has applied
// everything that leader had applied when asked: a client connecting here
// then sees at least the state before this member started. A follower
// also waits for its log to pass the leader's check once, as a ZooKeeper
// follower serves only once synced with its leader: a member seeded ahead
// of the leader (import-zookeeper from a more advanced directory) has
// applied more than the leader but holds a history the leader's snapshot
// is about to replace.
func (n *Node) waitReady() error {
	for last := time.Now(); ; {
		if n.IsLeader() {
			if err := n.raft.Barrier(time.Minute).Error(); err == nil && n.formed(true) {
				break
			}
		} else if addr, _ := n.raft.LeaderWithID(); addr != "" && n.fwd != nil && n.trans.matched.Load() {
			if err := n.catchUp(5 * time.Second); err == nil && n.formed(false) {
				break
			}
		}
		select {
		case <-n.done:
			return ErrClosed
		case <-n.cfg.Cancel:
			return ErrStartCancelled
		case <-time.After(20 * time.Millisecond):
		}
		if n.cfg.Join {
			continue // quietly wait to be added
		}
		if time.Since(last) > 5*time.Second {
			n.log.Warn("waiting for a leader")
			last = time.Now()
		}
	}
	n.tracker.reset(n.sessionsSnapshot)
	return nil
}

// catchUp asks the leader for its applied index and waits until this member
// has applied as much.
func (n *Node) catchUp(limit time.Duration) error {
	type result struct {
		index uint64
		err   error
	}
	ch := make(chan result, 1)
	n.fwd.call(msgReadIndex, nil, func(status byte, payload []byte, err error) {
		switch {
		case err != nil:
			ch <- result{err: err}
		case status != statusOK || len(payload) != 8:
			ch <- result{err: fmt.Errorf("ensemble: read index: %s", payload)}
		default:
			ch <- result{index: binary.BigEndian.Uint64(payload)}
		}
	})
	deadline := time.Now().Add(limit)
	r := <-ch
	if r.err != nil {
		return r.err
	}
	for n.raft.AppliedIndex() < r.index {
		if time.Now().After(deadline) {
			return fmt.Errorf("ensemble: applied %d of %d", n.raft.AppliedIndex(), r.index)
		}
		time.Sleep(2 * time.Millisecond)
	}
	return nil
}

func (n *Node) sessionsSnapshot() []znode.SessionInfo {
	t := n.RLockTree()
	defer n.RUnlockTree()
	return t.Sessions()
}

// SetHooks installs session lifecycle hooks (see Hooks).
func (n *Node) SetHooks(h backend.Hooks) { n.fsm.hooks.Store(&h) }

// logFailed stops the process when the Raft log cannot be written: the
// entries Raft believes stored are not, and nothing can be told so
// (ZooKeeper exits likewise when its transaction log fails).
func (n *Node) logFailed(err error) {
	n.fatal("cannot write the Raft log; stopping", err)
}

// fatal stops the member for good: it logs why, fails every proposal still
// awaited here (their clients' connections close unanswered) and calls
// Config.Fatal, by default exiting the process. It is for the states in
// which going on could acknowledge a write that is not durable or let this
// member's tree diverge from the others'.
func (n *Node) fatal(msg string, err error) {
	n.fatalOnce.Do(func() {
		n.unrecoverable.Add(1)
		n.log.Error(msg, zap.Error(err))
		_ = n.log.Sync()
		n.waiters.stop(fmt.Errorf("ensemble: member stopped: %w", err))
		if n.cfg.Fatal != nil {
			n.cfg.Fatal(err)
			return
		}
		os.Exit(1)
	})
}
