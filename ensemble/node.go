package ensemble

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.uber.org/zap"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/watches"
	"github.com/zkraft/zkraft/znode"
)

// ErrClosed is returned for proposals made after Close.
var ErrClosed = errors.New("ensemble: node closed")

// Node is one member of a zkraft ensemble.
type Node struct {
	cfg     Config
	log     *zap.Logger
	raft    *raft.Raft
	store   *raftboltdb.BoltStore
	fsm     *fsm
	waiters *waiters
	tracker *expiry
	watches *watches.Registry

	runID   uint64        // high bits of every origin this process proposes
	seq     atomic.Uint32 // low bits
	pending chan pending  // proposals whose futures the failure watcher checks

	closeOnce sync.Once
	done      chan struct{}
	wg        sync.WaitGroup
}

// pending pairs a raft future with the origin of its waiter.
type pending struct {
	f      raft.ApplyFuture
	origin uint64
}

// Open starts a member: it opens (or creates) the data directory, replays
// the log over the latest snapshot and returns once this member has applied
// everything committed before it started and can serve.
func Open(cfg Config) (*Node, error) {
	cfg.setDefaults()
	if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
		return nil, fmt.Errorf("ensemble: data dir: %w", err)
	}
	n := &Node{
		cfg:     cfg,
		log:     cfg.Logger,
		waiters: newWaiters(),
		watches: watches.New(),
		pending: make(chan pending, 4096),
		done:    make(chan struct{}),
	}
	n.runID = randomRunID()
	n.tracker = newExpiry()
	n.fsm = newFSM(n.log, cfg.Tree, n.watches, n.waiters, n.tracker)

	if err := n.startRaft(); err != nil {
		return nil, err
	}
	if err := n.waitReady(30 * time.Second); err != nil {
		n.Close()
		return nil, err
	}
	n.wg.Add(3)
	go n.watchFailures()
	go n.expireSessions()
	go n.reap()
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

func (n *Node) startRaft() error {
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(fmt.Sprint(n.cfg.ID))
	rc.Logger = newHCLogger(n.log)
	rc.SnapshotThreshold = n.cfg.SnapshotThreshold
	rc.TrailingLogs = n.cfg.SnapshotThreshold
	rc.SnapshotInterval = 30 * time.Second
	// A single voter elects itself as soon as its heartbeat timeout passes.
	rc.HeartbeatTimeout = 200 * time.Millisecond
	rc.ElectionTimeout = 200 * time.Millisecond
	rc.LeaderLeaseTimeout = 100 * time.Millisecond
	rc.CommitTimeout = 5 * time.Millisecond
	rc.MaxAppendEntries = 512
	rc.BatchApplyCh = true

	store, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(n.cfg.DataDir, "raft.db")})
	if err != nil {
		return fmt.Errorf("ensemble: open raft.db: %w", err)
	}
	n.store = store
	logs, err := raft.NewLogCache(1024, store)
	if err != nil {
		return fmt.Errorf("ensemble: log cache: %w", err)
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(n.cfg.DataDir, 2, rc.Logger)
	if err != nil {
		return fmt.Errorf("ensemble: snapshot store: %w", err)
	}
	addr, trans := raft.NewInmemTransport(raft.ServerAddress(rc.LocalID))
	existing, err := raft.HasExistingState(logs, store, snaps)
	if err != nil {
		return fmt.Errorf("ensemble: inspect state: %w", err)
	}
	if !existing {
		conf := raft.Configuration{Servers: []raft.Server{{ID: rc.LocalID, Address: addr}}}
		if err := raft.BootstrapCluster(rc, logs, store, snaps, trans, conf); err != nil {
			return fmt.Errorf("ensemble: bootstrap: %w", err)
		}
	}
	r, err := raft.NewRaft(rc, n.fsm, logs, store, snaps, trans)
	if err != nil {
		return fmt.Errorf("ensemble: start raft: %w", err)
	}
	n.raft = r
	return nil
}

// waitReady waits for a leader and then for a barrier, so that every entry
// committed before this start has been applied to the tree.
func (n *Node) waitReady(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for n.raft.State() != raft.Leader {
		if time.Now().After(deadline) {
			return fmt.Errorf("ensemble: no leader after %s", limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := n.raft.Barrier(limit).Error(); err != nil {
		return fmt.Errorf("ensemble: replay barrier: %w", err)
	}
	n.tracker.reset(n.sessionsSnapshot())
	return nil
}

func (n *Node) sessionsSnapshot() []znode.SessionInfo {
	t := n.RLockTree()
	defer n.RUnlockTree()
	return t.Sessions()
}

// SetHooks installs session lifecycle hooks (see Hooks).
func (n *Node) SetHooks(h Hooks) { n.fsm.hooks.Store(&h) }

// Propose appends txn to the replicated log. w (if not nil) is told the
// outcome: Applied on the FSM goroutine once the entry is applied here, or
// Failed if it could not be committed. Proposals made from one goroutine are
// applied in the order made.
func (n *Node) Propose(txn *znode.Txn, w Waiter) {
	select {
	case <-n.done:
		if w != nil {
			w.Failed(ErrClosed)
		}
		return
	default:
	}
	origin := uint64(0)
	if w != nil {
		origin = n.runID | uint64(n.seq.Add(1))
		n.waiters.put(origin, w)
	}
	var enc jute.Writer
	e := entry{Origin: origin, Txn: txn}
	e.encode(&enc)
	f := n.raft.Apply(enc.Buf, 0)
	select {
	case n.pending <- pending{f: f, origin: origin}:
	case <-n.done:
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

// watchFailures waits on every proposal's future in log order and reports
// the ones that failed to their waiters. Successful ones were already
// completed by the FSM.
func (n *Node) watchFailures() {
	defer n.wg.Done()
	for {
		select {
		case p := <-n.pending:
			if err := p.f.Error(); err != nil {
				if w := n.waiters.take(p.origin); w != nil {
					w.Failed(fmt.Errorf("ensemble: proposal not committed: %w", err))
				}
			}
		case <-n.done:
			return
		}
	}
}

// RLockTree read-locks the tree and returns it; call RUnlockTree after.
// Watch registrations made while holding the lock cannot miss an event.
func (n *Node) RLockTree() *znode.Tree {
	n.fsm.mu.RLock()
	return n.fsm.tree
}

// RUnlockTree releases RLockTree.
func (n *Node) RUnlockTree() { n.fsm.mu.RUnlock() }

// LastZxid is the zxid of the last applied transaction.
func (n *Node) LastZxid() int64 { return n.fsm.lastZxid.Load() }

// Watches is the member's watch registry.
func (n *Node) Watches() *watches.Registry { return n.watches }

// TouchSession records activity on a session, postponing its expiry.
func (n *Node) TouchSession(id int64) { n.tracker.touch(id) }

// IsLeader reports whether this member currently leads.
func (n *Node) IsLeader() bool { return n.raft.State() == raft.Leader }

// Mode is the member's role as ZooKeeper's srvr reports it: "standalone"
// for a one-member ensemble, else "leader" or "follower".
func (n *Node) Mode() string {
	cfg := n.raft.GetConfiguration()
	if cfg.Error() == nil && len(cfg.Configuration().Servers) == 1 {
		return "standalone"
	}
	if n.IsLeader() {
		return "leader"
	}
	return "follower"
}

// Close stops the member. Acknowledged writes are already durable in the
// log; Close only stops background work and releases files.
func (n *Node) Close() error {
	var err error
	n.closeOnce.Do(func() {
		close(n.done)
		if n.raft != nil {
			err = n.raft.Shutdown().Error()
		}
		n.wg.Wait()
		if n.store != nil {
			if cerr := n.store.Close(); err == nil {
				err = cerr
			}
		}
	})
	return err
}
