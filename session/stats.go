package session

import (
	"sync/atomic"
	"time"

	"github.com/zkraft/zkraft/internal/base/avgminmax"
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
	// readLat and updateLat are ZooKeeper's readlatency and updatelatency
	// summaries (ServerMetrics READ_LATENCY, UPDATE_LATENCY), in ms.
	readLat, updateLat avgminmax.Percentile
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
	s.readLat.Reset()
	s.updateLat.Reset()
}

// resetStats is the server's part of srst and the AdminServer's
// stat_reset (ZooKeeper's ServerStats.reset); the operator starts the
// member's figures over too.
func (s *Server) resetStats() { s.stats.reset() }

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
	// heard is when a read-only session's connection last read a
	// request (unix ns; kept for read-only sessions only).
	heard atomic.Int64
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
	switch kind {
	case answeredRead:
		c.srv.stats.readLat.Add(ms)
	case answeredWrite:
		c.srv.stats.updateLat.Add(ms)
	}
	c.srv.stats.lat.Add(ms)
	c.stats.lat.Add(ms)
	c.stats.lastLat.Store(ms)
	c.stats.lastResp.Store(now.UnixMilli())
	c.stats.lastZxid.Store(zxid)
}
