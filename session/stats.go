package session

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// latencyStats are min/avg/max counters in whole milliseconds, as
// ZooKeeper's AvgMinMaxCounter keeps them. Atomics: bumped on hot paths.
type latencyStats struct {
	count atomic.Int64
	total atomic.Int64
	min   atomic.Int64 // -1 = no sample yet
	max   atomic.Int64
}

func (l *latencyStats) reset() {
	l.count.Store(0)
	l.total.Store(0)
	l.min.Store(-1)
	l.max.Store(0)
}

func (l *latencyStats) add(ms int64) {
	l.count.Add(1)
	l.total.Add(ms)
	for {
		m := l.min.Load()
		if (m >= 0 && m <= ms) || l.min.CompareAndSwap(m, ms) {
			break
		}
	}
	for {
		m := l.max.Load()
		if m >= ms || l.max.CompareAndSwap(m, ms) {
			break
		}
	}
}

// latencies returns min/avg/max; all zero before the first sample.
func (l *latencyStats) latencies() (min int64, avg float64, max int64) {
	n := l.count.Load()
	if n == 0 {
		return 0, 0, 0
	}
	return l.min.Load(), float64(l.total.Load()) / float64(n), l.max.Load()
}

// serverStats are the counters the four-letter words report (ZooKeeper's
// ServerStats).
type serverStats struct {
	packetsReceived atomic.Int64
	packetsSent     atomic.Int64
	outstanding     atomic.Int64
	outstandingPeak atomic.Int64 // the most writes in flight at once (tests)
	authFailed      atomic.Int64
	started         time.Time
	lat             latencyStats
}

func newServerStats() *serverStats {
	s := &serverStats{started: time.Now()}
	s.lat.reset()
	return s
}

func (s *serverStats) latencies() (int64, float64, int64) { return s.lat.latencies() }

// reset clears the counters (srst).
func (s *serverStats) reset() {
	s.packetsReceived.Store(0)
	s.packetsSent.Store(0)
	s.lat.reset()
}

// resetStats is srst and the AdminServer's stat_reset: ZooKeeper's
// ServerStats.reset, which also starts its metrics' summaries over
// (proposal sizes, fsync times).
func (s *Server) resetStats() {
	s.stats.reset()
	s.node.ResetProposalSizes()
	s.node.ResetFsyncTimes()
}

// connStats are one connection's counters (cons).
type connStats struct {
	established time.Time
	received    atomic.Int64
	sent        atomic.Int64
	lastOp      atomic.Int32 // jute.Op of the last request
	lastCxid    atomic.Int32
	lastZxid    atomic.Int64
	lastResp    atomic.Int64 // unix ms of the last reply
	lastLat     atomic.Int64 // ms
	lat         latencyStats
}

// requested records a request as it is read.
func (c *conn) requested(h jute.RequestHeader) {
	c.stats.lastOp.Store(int32(h.Type))
	if h.Xid > 0 {
		c.stats.lastCxid.Store(h.Xid)
	}
}

// answered records a reply's latency and zxid for the server and this
// connection.
func (c *conn) answered(start time.Time, zxid int64) {
	now := time.Now()
	ms := now.Sub(start).Milliseconds()
	c.srv.stats.lat.add(ms)
	c.stats.lat.add(ms)
	c.stats.lastLat.Store(ms)
	c.stats.lastResp.Store(now.UnixMilli())
	c.stats.lastZxid.Store(zxid)
}

// opName is ZooKeeper's short name of an operation in cons output.
func opName(op int32) string {
	switch jute.Op(op) {
	case 0:
		return "NA"
	case jute.OpPing:
		return "PING"
	case jute.OpCreate, jute.OpCreate2, jute.OpCreateContainer, jute.OpCreateTTL:
		return "CREA"
	case jute.OpDelete:
		return "DELE"
	case jute.OpSetData:
		return "SETD"
	case jute.OpGetData:
		return "GETD"
	case jute.OpExists:
		return "EXIS"
	case jute.OpGetChildren, jute.OpGetChildren2:
		return "GETC"
	case jute.OpGetACL:
		return "GETA"
	case jute.OpSetACL:
		return "SETA"
	case jute.OpSync:
		return "SYNC"
	case jute.OpMulti:
		return "MULT"
	case jute.OpMultiRead:
		return "MLTR"
	case jute.OpSetWatches, jute.OpSetWatches2:
		return "SETW"
	case jute.OpCloseSession:
		return "CLOS"
	}
	return "OTHR"
}

// dirSize sums the sizes of the files under dir (dirs, conf).
func dirSize(dir string) int64 {
	if dir == "" {
		return 0
	}
	var total int64
	_ = filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			total += info.Size()
		}
		return nil
	})
	return total
}

// logDir is the directory holding the replicated log (Env "dataLogDir"),
// the data directory when it is not set apart.
func (s *Server) logDir() string {
	if d := s.cfg.Env["dataLogDir"]; d != "" {
		return d
	}
	return s.cfg.Env["dataDir"]
}
