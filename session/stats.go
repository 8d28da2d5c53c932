package session

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/zkraft/zkraft/internal/avgminmax"
	"github.com/zkraft/zkraft/jute"
)

// latencyStats are request latencies in whole milliseconds, as
// ZooKeeper's AvgMinMaxCounter keeps them (bumped on the hot path).
type latencyStats struct{ avgminmax.Counter }

// longAvg is the average as a connection's stats give it: ZooKeeper's
// per-connection average is a long (integer division), 0 before the first.
func (l *latencyStats) longAvg() int64 {
	if n := l.Count(); n > 0 {
		return l.Sum() / n
	}
	return 0
}

// latencies returns min/avg/max; all zero before the first sample.
func (l *latencyStats) latencies() (min int64, avg float64, max int64) {
	return l.Min(), l.Avg(), l.Max()
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
	return &serverStats{started: time.Now()}
}

func (s *serverStats) latencies() (int64, float64, int64) { return s.lat.latencies() }

// reset clears the counters (srst).
func (s *serverStats) reset() {
	s.packetsReceived.Store(0)
	s.packetsSent.Store(0)
	s.lat.Reset()
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

// answeredKind says what answered is recording.
type answeredKind uint8

const (
	answeredRead    answeredKind = iota + 1
	answeredWrite                // went through the log
	answeredBarrier              // a linearizable read's barrier: its read is recorded on its own
)

// answered records a reply's latency and zxid for the server and this
// connection, and tells Config.Requests of a read's or write's.
func (c *conn) answered(start time.Time, zxid int64, op jute.Op, kind answeredKind) {
	now := time.Now()
	took := now.Sub(start)
	if o := c.srv.cfg.Requests; o != nil && kind != answeredBarrier {
		o.ObserveRequest(op, kind == answeredWrite, took)
	}
	ms := took.Milliseconds()
	c.srv.stats.lat.Add(ms)
	c.stats.lat.Add(ms)
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
