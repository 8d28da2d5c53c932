// Package metrics is a member's Prometheus registry, served on
// metricsProvider.httpPort (--metrics-addr): mntr's figures under the
// names ZooKeeper's Prometheus metrics provider gives them (znode_count,
// watch_count, avg_latency, ...), its summaries (readlatency,
// updatelatency, fsynctime, snapshottime, election_time), zkraft's own
// histograms (per-op request latency, Raft appends, log syncs,
// snapshots), Raft's positions, leader changes and follower lag, and the
// Go runtime and process collectors. docs/operations.md lists them.
//
// Registry is built before the member opens (Ensemble's hooks go into its
// config, Requests into the session server's), and Watch adds what is
// read at scrape time once both exist.
package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/session"
)

// Registry holds a member's metrics.
type Registry struct {
	reg      *prometheus.Registry
	requests *Requests
	raft     *raftTimings
}

// New returns a registry with the Go runtime and process collectors and
// the metrics observed as they happen; Watch adds the rest.
func New() *Registry {
	r := &Registry{reg: prometheus.NewRegistry(), requests: newRequests(), raft: newRaftTimings()}
	r.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	r.requests.register(r.reg)
	r.raft.register(r.reg)
	return r
}

// Requests is the session server's request observer (session.Config.Requests).
func (r *Registry) Requests() *Requests { return r.requests }

// Ensemble returns the hooks for the member's config (ensemble.Config.Metrics).
func (r *Registry) Ensemble() backend.Metrics { return r.raft.hooks() }

// Watch adds the figures read from srv at scrape time (mntr's).
func (r *Registry) Watch(srv *session.Server) error {
	return r.reg.Register(mntrCollector{srv: srv})
}

// WatchRaft adds an ensemble member's Raft figures, read at scrape time:
// at the start for a member, and once it cuts over for a live
// migration's observer (which has no Raft before).
func (r *Registry) WatchRaft(member backend.Raft) error {
	return r.reg.Register(newRaftCollector(member))
}

// Gatherer is the registry itself, for tests and other exporters.
func (r *Registry) Gatherer() prometheus.Gatherer { return r.reg }

// Handler serves the registry in Prometheus' text format (the format
// ZooKeeper's provider serves; OpenMetrics is not offered, since it would
// rename counters with a _total suffix that dashboards do not expect).
func (r *Registry) Handler() http.Handler {
	return promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}
