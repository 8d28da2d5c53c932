package ensemble

import (
	"time"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/znode"
)

// Config configures a Node.
type Config struct {
	// ID is this member's server id (zoo.cfg server.N / myid).
	ID uint8
	// DataDir holds raft.db (log and stable store) and snapshots/.
	DataDir string
	// TickTime is ZooKeeper's basic time unit; the expiry check runs every tick.
	TickTime time.Duration
	// Tree configures the data tree (extended types, quota enforcement).
	Tree znode.Options
	// SnapshotThreshold is the number of log entries between snapshots
	// (ZooKeeper's snapCount). Zero means 100000.
	SnapshotThreshold uint64
	// ReapInterval is how often the leader looks for empty containers and
	// expired TTL nodes (znode.container.checkIntervalMs). Zero means 60s.
	ReapInterval time.Duration
	// ReapMaxPerMinute bounds reaper deletes (znode.container.maxPerMinute).
	// Zero means 10000.
	ReapMaxPerMinute int
	// Logger receives structured logs; nil means zap.NewNop().
	Logger *zap.Logger
}

func (c *Config) setDefaults() {
	if c.TickTime <= 0 {
		c.TickTime = 2 * time.Second
	}
	if c.SnapshotThreshold == 0 {
		c.SnapshotThreshold = 100000
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
	if c.ID == 0 {
		c.ID = 1
	}
}
