package session

import (
	"sort"
	"time"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/internal/base/avgminmax"
	"github.com/zkraft/zkraft/jute"
)

// The operator's view of a Server: read-only copies of its state, for the
// four-letter words, the AdminServer and the metrics (package operator).
// Nothing here is on the client path.

// Stats are the server's counters at one moment (ZooKeeper's
// ServerStats): since the start or the last ResetStats, except Outstanding
// and AuthFailed.
type Stats struct {
	PacketsReceived int64
	PacketsSent     int64
	// Outstanding is the writes in flight on the member now.
	Outstanding int64
	AuthFailed  int64
	// MinLatency, AvgLatency and MaxLatency are request latencies in
	// milliseconds; all zero before the first request.
	MinLatency int64
	AvgLatency float64
	MaxLatency int64
	// Started is when the server was created.
	Started time.Time
	// ReadLatency and UpdateLatency are ZooKeeper's readlatency (requests
	// answered from the tree) and updatelatency (changes that went
	// through the log) summaries.
	ReadLatency, UpdateLatency LatencySummary
}

// LatencySummary is one of ZooKeeper's AvgMinMaxPercentileCounters, in
// milliseconds, as mntr prints it: Avg rounded to four decimals, and the
// 50th, 95th, 99th and 99.9th percentiles of a uniform sample of the
// requests since the start or the last ResetStats; all zero before the
// first.
type LatencySummary struct {
	Avg                  float64
	Min, Max, Count, Sum int64
	P50, P95, P99, P999  int64
}

func summarize(p *avgminmax.Percentile) LatencySummary {
	q := p.Percentiles()
	return LatencySummary{Avg: p.Avg(), Min: p.Min(), Max: p.Max(), Count: p.Count(), Sum: p.Sum(),
		P50: q[0], P95: q[1], P99: q[2], P999: q[3]}
}

// Connection is one client connection at one moment, as cons lists it.
type Connection struct {
	// Remote is the client's address (host:port).
	Remote      string
	Established time.Time
	// SessionID is 0 before the handshake; Timeout is the negotiated
	// session timeout in milliseconds.
	SessionID int64
	Timeout   int32
	// Queued is the connection's requests in flight.
	Queued   int
	Received int64
	Sent     int64
	// LastOp, LastCxid and LastZxid are of the last request (zero before
	// one); LastResponse is the unix milliseconds of the last reply.
	LastOp       jute.Op
	LastCxid     int32
	LastZxid     int64
	LastResponse int64
	// LastLatency, MinLatency, AvgLatency and MaxLatency are in
	// milliseconds; AvgLatency is whole (ZooKeeper's long).
	LastLatency int64
	MinLatency  int64
	AvgLatency  int64
	MaxLatency  int64
}

// Backend is the state the server serves now: an ensemble member, or an
// observer of a ZooKeeper ensemble.
func (s *Server) Backend() backend.Backend { return s.backend() }

// Config is the server's configuration, defaults applied.
func (s *Server) Config() Config { return s.cfg }

// Logger is the server's logger.
func (s *Server) Logger() *zap.Logger { return s.log }

// Mode is the member's role for srvr and mntr: the node's, or
// "read-only" for a member serving read-only clients without a quorum.
func (s *Server) Mode() string { return s.mode() }

// Serving reports whether this member serves clients: it is part of a
// working majority, or serves read-only clients without one
// (readonlymode.enabled).
func (s *Server) Serving() bool { return s.backend().HasQuorum() || s.cfg.ReadOnlyMode }

// Stats returns the server's counters now.
func (s *Server) Stats() Stats {
	lmin, lavg, lmax := s.stats.latencies()
	return Stats{
		PacketsReceived: s.stats.packetsReceived.Load(),
		PacketsSent:     s.stats.packetsSent.Load(),
		Outstanding:     s.stats.outstanding.Load(),
		AuthFailed:      s.stats.authFailed.Load(),
		MinLatency:      lmin, AvgLatency: lavg, MaxLatency: lmax,
		Started:     s.stats.started,
		ReadLatency: summarize(&s.stats.readLat), UpdateLatency: summarize(&s.stats.updateLat),
	}
}

// ResetStats is srst and the AdminServer's stat_reset: ZooKeeper's
// ServerStats.reset, which also starts its metrics' summaries over
// (proposal sizes, fsync times).
func (s *Server) ResetStats() { s.resetStats() }

// ResetConnectionStats is crst: every connection's counters start over.
func (s *Server) ResetConnectionStats() { s.resetConnStats() }

// CountAuthFailure counts a failed authentication made elsewhere (the
// AdminServer's), in Stats.AuthFailed.
func (s *Server) CountAuthFailure() { s.stats.authFailed.Add(1) }

// DigestIdentities are the identities a digest "user:password" grants:
// the digest, and the super user when it is Config.SuperDigest.
func (s *Server) DigestIdentities(auth string) []jute.Id { return s.digestIdentities(auth) }

// NumConnections is the number of open client connections.
func (s *Server) NumConnections() int { return s.numConns() }

// Connections returns the open connections, oldest first.
func (s *Server) Connections() []Connection {
	conns := s.connsByAge()
	out := make([]Connection, len(conns))
	for i, c := range conns {
		sess := c.session()
		st := &c.stats
		lmin, _, lmax := st.lat.latencies()
		out[i] = Connection{
			Remote:       c.nc.RemoteAddr().String(),
			Established:  st.established,
			SessionID:    sess.id,
			Timeout:      sess.timeout,
			Queued:       c.queued(),
			Received:     st.received.Load(),
			Sent:         st.sent.Load(),
			LastOp:       jute.Op(st.lastOp.Load()),
			LastCxid:     st.lastCxid.Load(),
			LastZxid:     st.lastZxid.Load(),
			LastResponse: st.lastResp.Load(),
			LastLatency:  st.lastLat.Load(),
			MinLatency:   lmin,
			AvgLatency:   st.lat.longAvg(),
			MaxLatency:   lmax,
		}
	}
	return out
}

// numConns is the number of open connections.
func (s *Server) numConns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns) + len(s.inproc)
}

// connsByAge returns the open connections, oldest first.
func (s *Server) connsByAge() []*conn {
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.conns)+len(s.inproc))
	for c := range s.allConnsLocked() {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	sort.Slice(conns, func(i, j int) bool { return conns[i].stats.established.Before(conns[j].stats.established) })
	return conns
}

func (s *Server) resetConnStats() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.allConnsLocked() {
		c.stats.received.Store(0)
		c.stats.sent.Store(0)
		c.stats.lat.Reset()
	}
}

// queued is the number of this connection's requests in flight.
func (c *conn) queued() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.pending)
	for _, p := range c.pending {
		n += len(p.parked)
	}
	return n
}
