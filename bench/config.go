package bench

import (
	"fmt"
	"strings"
	"time"
)

// Config is one benchmark run's parameters (the command's flags).
type Config struct {
	Servers        []string      // host:port; session i uses Servers[i % len]
	Workload       string        // see workloadNames
	Sessions       int           // concurrent sessions (workers)
	Inflight       int           // requests outstanding per session
	ValueSize      int           // bytes per znode value
	Keys           int           // keys for read/write/mixed
	Duration       time.Duration // measured time
	Warmup         time.Duration // load before measuring
	ReadRatio      float64       // mixed: fraction of getData
	Watchers       int           // watch-fanout: watcher sessions
	Nodes          int           // populate: znodes to create
	Shape          string        // populate: "flat" (directories of 1000) or "realistic" (bench/treeshape)
	Ephemerals     int           // ephemeral-churn: ephemerals per session
	SessionTimeout time.Duration // requested session timeout
	ConnectTimeout time.Duration // TCP connect + handshake limit
	Root           string        // the benchmark's subtree
	Keep           bool          // leave Root in place afterwards
	Seed           int64         // random seed for key choice (0: time-based)
}

// workloadNames lists the accepted --workload values.
var workloadNames = []string{"read", "write", "create-delete", "mixed", "ephemeral-churn", "watch-fanout", "populate", "idle-sessions"}

// Validate checks the configuration and fills derived defaults.
func (c *Config) Validate() error {
	if len(c.Servers) == 0 {
		return fmt.Errorf("bench: no --server given")
	}
	known := false
	for _, n := range workloadNames {
		known = known || n == c.Workload
	}
	if !known {
		return fmt.Errorf("bench: unknown workload %q (one of %s)", c.Workload, strings.Join(workloadNames, ", "))
	}
	switch {
	case c.Sessions < 1:
		return fmt.Errorf("bench: --sessions must be at least 1")
	case c.Inflight < 1:
		return fmt.Errorf("bench: --inflight must be at least 1")
	case c.ValueSize < 0 || c.ValueSize > 1<<20:
		return fmt.Errorf("bench: --value-size must be within 0..1048576")
	case c.Keys < 1:
		return fmt.Errorf("bench: --keys must be at least 1")
	case c.Duration <= 0:
		return fmt.Errorf("bench: --duration must be positive")
	case c.Warmup < 0:
		return fmt.Errorf("bench: --warmup must not be negative")
	case c.ReadRatio < 0 || c.ReadRatio > 1:
		return fmt.Errorf("bench: --read-ratio must be within 0..1")
	case c.Watchers < 1:
		return fmt.Errorf("bench: --watchers must be at least 1")
	case c.Nodes < 1:
		return fmt.Errorf("bench: --nodes must be at least 1")
	case c.Shape != "" && c.Shape != "flat" && c.Shape != "realistic":
		return fmt.Errorf("bench: --shape must be flat or realistic")
	case c.Ephemerals < 0:
		return fmt.Errorf("bench: --ephemerals must not be negative")
	case c.SessionTimeout < time.Second:
		return fmt.Errorf("bench: --session-timeout must be at least 1s")
	case !strings.HasPrefix(c.Root, "/") || c.Root == "/" || strings.HasSuffix(c.Root, "/"):
		return fmt.Errorf("bench: --root must be an absolute znode path other than /")
	case c.Root == "/zookeeper" || strings.HasPrefix(c.Root, "/zookeeper/"):
		return fmt.Errorf("bench: --root must not be under /zookeeper (the benchmark deletes its root)")
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = 5 * time.Second
	}
	return nil
}
