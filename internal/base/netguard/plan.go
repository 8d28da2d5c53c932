package netguard

// PlanCeiling is the most file descriptors a Plan divides: a higher (or
// unlimited) file limit is planned as this many, already more connections
// than a server holds in memory.
const PlanCeiling = 1 << 20

// Per-address caps of the listeners other than the client port (whose
// per-address cap is ZooKeeper's maxClientCnxns), before Plan lowers them
// to fit a small file limit. A peer member holds several connections to
// the member port (Raft's pool of up to three, its append stream, its
// forwarding stream, and more while a snapshot is sent or an election
// runs), and members may share a host; the operators' ports see a few
// browsers, scrapers and scripts per host.
const (
	memberPerIP  = 64
	adminPerIP   = 64
	metricsPerIP = 16
	pprofPerIP   = 8
)

// Plan divides the file descriptors a process may hold between its
// listeners, so that connections can never take the descriptors the
// server needs for anything else. Reserve is kept for that: the data and
// log files, snapshots being written and sent, connections to peers, the
// runtime's own (epoll, pipes), standard streams. What remains is shared:
// each operator port (AdminServer, metrics, pprof) and the member port get
// a share bounded to what such a port ever needs, and the client ports
// (plain and TLS together) get the rest. Every share is at least 1 (a
// limit too small for that, under 32, cannot run a server anyway).
type Plan struct {
	// Limit is the file limit planned for (the soft RLIMIT_NOFILE, at most
	// PlanCeiling).
	Limit int
	// Reserve is what no listener may take: an eighth of Limit, at least
	// 256 and at most 8192, but never more than half.
	Reserve int
	// Client caps the client ports' connections in all (MaxConns only:
	// per address, maxClientCnxns applies).
	Client Limits
	// Member caps the member port's (Raft, appends, forwarding): an
	// eighth of what remains, at most 1024; 64 per address.
	Member Limits
	// Admin caps the AdminServer's (and the console's): a sixteenth, at
	// most 256; 64 per address.
	Admin Limits
	// Metrics caps the Prometheus port's: a thirty-second, at most 64; 16
	// per address.
	Metrics Limits
	// Pprof caps the profiling port's: a thirty-second, at most 32; 8 per
	// address.
	Pprof Limits
}

// NewPlan divides limit file descriptors (0: unknown or unlimited, planned
// as PlanCeiling).
func NewPlan(limit uint64) Plan {
	l := PlanCeiling
	if limit > 0 && limit < PlanCeiling {
		l = int(limit)
	}
	p := Plan{Limit: l, Reserve: min(max(l/8, 256), 8192, l/2)}
	free := l - p.Reserve
	share := func(part, most, perIP int) Limits {
		n := min(max(free/part, 1), most)
		return Limits{MaxConns: n, MaxConnsPerIP: min(perIP, n)}
	}
	p.Member = share(8, 1024, memberPerIP)
	p.Admin = share(16, 256, adminPerIP)
	p.Metrics = share(32, 64, metricsPerIP)
	p.Pprof = share(32, 32, pprofPerIP)
	p.Client = Limits{MaxConns: max(free-p.Member.MaxConns-p.Admin.MaxConns-p.Metrics.MaxConns-p.Pprof.MaxConns, 1)}
	return p
}
