package ensemble

import (
	"net"
	"time"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/watches"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/internal/base/netguard"
	"github.com/zkraft/zkraft/znode"
)

// Config configures a Node.
type Config struct {
	// ID is this member's server id (zoo.cfg server.N / myid).
	ID int64
	// DataDir holds snapshots/ and, unless LogDir is set, raft.db (log and
	// stable store) and raft.journal (the log's write-ahead journal,
	// journal.go).
	DataDir string
	// LogDir holds raft.db and raft.journal when set (zoo.cfg dataLogDir):
	// a device of its own keeps the log's fsyncs clear of snapshot writes.
	// A log already in DataDir stays in use there (logdir.go).
	LogDir string
	// NoSync is zoo.cfg forceSync=no: log appends are acknowledged once
	// written, without waiting for the disk (a power loss on a majority
	// can then lose acknowledged writes, as with ZooKeeper's forceSync=no).
	NoSync bool
	// JournalSize is the journal file's size in bytes; zero means 16 MiB.
	// A record larger than the journal goes straight to raft.db.
	JournalSize int64
	// TickTime is ZooKeeper's basic time unit; the expiry check runs every tick.
	TickTime time.Duration
	// Tree configures the data tree (extended types, quota enforcement).
	Tree znode.Options
	// SnapshotThreshold is the number of log entries between snapshots
	// (ZooKeeper's snapCount). Zero means 100000.
	SnapshotThreshold uint64
	// SnapshotBytes bounds the log by size as well (ZooKeeper's
	// snapSizeLimitInKb, in bytes): a member snapshots once the log since
	// its last snapshot passes a random point between half of it and all
	// of it, and keeps at most about half of it as trailing log. Zero (or
	// less) means entries alone (SnapshotThreshold) bound the log.
	SnapshotBytes int64
	// FsyncWarning is ZooKeeper's fsync.warningthresholdms: a log sync
	// that takes longer is logged and counted (Node.FsyncTimes). Zero
	// means 1s; less than a millisecond, any sync of a millisecond or more.
	FsyncWarning time.Duration
	// ReapInterval is how often the leader looks for empty containers and
	// expired TTL nodes (znode.container.checkIntervalMs). Zero means 60s.
	ReapInterval time.Duration
	// ReapMaxPerMinute bounds reaper deletes (znode.container.maxPerMinute).
	// Zero means 10000.
	ReapMaxPerMinute int
	// Logger receives structured logs; nil means zap.NewNop().
	Logger *zap.Logger
	// Metrics receives the durations this member measures (metrics.go).
	Metrics backend.Metrics
	// Watches is the registry the member's changes fire (default: a new
	// one). A live migration's cutover passes the one its clients'
	// watches are in already.
	Watches *watches.Registry

	// Peers lists every member (zoo.cfg server.N lines) including this
	// one. With fewer than two, the member runs alone on an in-memory
	// transport and needs no member port.
	Peers []backend.Peer
	// ElectionTimeout is how long a follower waits for a silent leader
	// before it elects (Raft randomizes it up to twice as long), and a
	// leader for a silent quorum before it steps down: ZooKeeper's
	// syncLimit ticks, which a member that is merely slow (CPU starved,
	// in a GC pause, waiting on its disk) stays within. A leader whose
	// process dies is replaced without waiting for it (timeouts.go). Zero
	// means 5 ticks (the usual syncLimit).
	ElectionTimeout time.Duration
	// CommitTimeout is how long a leader with nothing new to send waits
	// before telling followers the commit index anyway; zero means 50ms.
	// Commits normally reach followers at once (the next entries or a
	// commit nudge), so this is only a fallback.
	CommitTimeout time.Duration
	// Join makes a new member wait to be added by a reconfig instead of
	// bootstrapping with Peers.
	Join bool
	// Cancel, once closed, makes an Open still waiting for a leader give
	// up (ErrStartCancelled): a server told to stop before its ensemble
	// formed (SIGTERM) exits at once, as ZooKeeper's does.
	Cancel <-chan struct{}
	// Listen opens the member port; nil means net.Listen("tcp", addr).
	Listen func(addr string) (net.Listener, error)
	// MemberConns caps the member port's connections, in all and per
	// source address (transport.go guards it); zero fields take
	// DefaultMemberConns'. A peer holds several (Raft's pool, its append
	// and forwarding streams, more while it installs a snapshot).
	MemberConns netguard.Limits
	// Rejected counts the member port's refused connections and failed
	// accepts (mntr's zk_connection_rejected, with the process's other
	// listeners); nil counts nothing.
	Rejected *netguard.Rejections
	// Dial opens connections to other members; nil means net.DialTimeout.
	// Tests use Listen and Dial to inject partitions and delays.
	Dial Dialer
	// Fatal is called once when this member can no longer be trusted to
	// go on: its log cannot be written, an entry is not durable when it
	// is due to be applied, or an entry cannot be decoded or applied. The
	// member then answers nothing more and applies nothing more; nil
	// means the process exits with status 1 (ZooKeeper exits likewise
	// when it cannot write its log). Tests set it to observe the stop.
	Fatal func(error)
	// AuditUser turns on the audit log of ephemeral nodes deleted with
	// their session (ZooKeeper's ephemeralZNodeDeletionOnSessionCloseOrExpire,
	// logged by every member) under this user, the server's own.
	AuditUser string

	// leaderNotify, when set, wraps the channel on which the session
	// expiry loop hears of this member's leadership (Raft's LeaderCh);
	// tests use it to delay the notifications. Nil in production.
	leaderNotify func(<-chan bool) <-chan bool
	// beforeLeadershipWatch, when set, runs at the start of
	// watchLeadership, before its observer is registered; tests use it to
	// hold the goroutine back as a loaded machine may. Nil in production.
	beforeLeadershipWatch func(*Node)
	// memberIdle, when set, replaces memberIdle (idleconn.go) on this
	// member's port; tests shorten it. Zero in production: every member
	// must time and retire streams alike.
	memberIdle time.Duration
}

// DefaultSnapshotThreshold is how many log entries a member applies
// between snapshots when Config.SnapshotThreshold is 0: ZooKeeper's
// snapCount default.
const DefaultSnapshotThreshold = 100000

func (c *Config) setDefaults() {
	if c.TickTime <= 0 {
		c.TickTime = 2 * time.Second
	}
	if c.SnapshotThreshold == 0 {
		c.SnapshotThreshold = DefaultSnapshotThreshold
	}
	if c.CommitTimeout < time.Millisecond {
		c.CommitTimeout = 50 * time.Millisecond
	}
	if c.ReapInterval <= 0 {
		c.ReapInterval = time.Minute
	}
	if c.ReapMaxPerMinute <= 0 {
		c.ReapMaxPerMinute = 10000
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	if c.ID == 0 && !c.multi() {
		c.ID = 1 // a lone member's; in an ensemble 0 is an id (ZooKeeper's server.0)
	}
	if c.ElectionTimeout <= 0 {
		c.ElectionTimeout = 5 * c.TickTime
	}
	if c.Dial == nil {
		c.Dial = defaultDialer
	}
	if c.Listen == nil {
		c.Listen = func(addr string) (net.Listener, error) { return net.Listen("tcp", addr) }
	}
	if c.MemberConns.MaxConns <= 0 {
		c.MemberConns.MaxConns = DefaultMemberConns.MaxConns
	}
	if c.MemberConns.MaxConnsPerIP <= 0 {
		c.MemberConns.MaxConnsPerIP = min(DefaultMemberConns.MaxConnsPerIP, c.MemberConns.MaxConns)
	}
}

// multi reports whether this is a multi-member ensemble.
func (c *Config) multi() bool { return len(c.Peers) > 1 }

// self returns this member's Peer entry.
func (c *Config) self() (backend.Peer, bool) {
	for _, p := range c.Peers {
		if p.ID == c.ID {
			return p, true
		}
	}
	return backend.Peer{}, false
}
