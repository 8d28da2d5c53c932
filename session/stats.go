package session

import (
	"sync/atomic"
	"time"
)

// serverStats are the counters the four-letter words report (ZooKeeper's
// ServerStats). All fields are atomics: they are bumped on hot paths.
type serverStats struct {
	packetsReceived atomic.Int64
	packetsSent     atomic.Int64
	outstanding     atomic.Int64
	started         time.Time

	latCount atomic.Int64
	latTotal atomic.Int64 // microseconds
	latMin   atomic.Int64 // microseconds; -1 = none yet
	latMax   atomic.Int64 // microseconds
}

func newServerStats() *serverStats {
	s := &serverStats{started: time.Now()}
	s.latMin.Store(-1)
	return s
}

// latency records one request's service time.
func (s *serverStats) latency(start time.Time) {
	us := time.Since(start).Microseconds()
	s.latCount.Add(1)
	s.latTotal.Add(us)
	for {
		m := s.latMin.Load()
		if (m >= 0 && m <= us) || s.latMin.CompareAndSwap(m, us) {
			break
		}
	}
	for {
		m := s.latMax.Load()
		if m >= us || s.latMax.CompareAndSwap(m, us) {
			break
		}
	}
}

// latencies returns min/avg/max in milliseconds as ZooKeeper reports them.
func (s *serverStats) latencies() (min int64, avg float64, max int64) {
	n := s.latCount.Load()
	if n == 0 {
		return 0, 0, 0
	}
	m := s.latMin.Load()
	if m < 0 {
		m = 0
	}
	return m / 1000, float64(s.latTotal.Load()) / float64(n) / 1000, s.latMax.Load() / 1000
}

// reset clears the counters (srst).
func (s *serverStats) reset() {
	s.packetsReceived.Store(0)
	s.packetsSent.Store(0)
	s.latCount.Store(0)
	s.latTotal.Store(0)
	s.latMin.Store(-1)
	s.latMax.Store(0)
}

// connStats are one connection's counters (cons).
type connStats struct {
	received atomic.Int64
	sent     atomic.Int64
}
