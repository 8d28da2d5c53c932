package server

import (
	"fmt"
	"net"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/operator/metrics"
	"github.com/zkraft/zkraft/session"
)

// startMetrics serves reg on /metrics in the Prometheus text format, as
// ZooKeeper's PrometheusMetricsProvider does on metricsProvider.httpPort,
// on ln (bound before the member opened its files, so a port in use stops
// the start first), once srv and node (nil for an observer of ZooKeeper,
// which has no Raft) are there to be read at scrape time.
// Its connections have the deadlines of idle timeout idle
// (metricsProvider.idleTimeout, httpTimeouts) and g's caps.
func startMetrics(ln net.Listener, reg *metrics.Registry, node *ensemble.Node, srv *session.Server, g *listenGuard, idle time.Duration, log *zap.Logger) (func(), error) {
	if err := reg.Watch(srv); err != nil {
		return nil, fmt.Errorf("register metrics: %w", err)
	}
	if node != nil {
		if err := reg.WatchRaft(node); err != nil {
			return nil, fmt.Errorf("register metrics: %w", err)
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", reg.Handler())
	t := httpTimeouts(idle)
	stop := g.serveHTTP("metrics", ln, nil, t, mux, log)
	log.Info("metrics serving", append([]zap.Field{zap.String("addr", ln.Addr().String())}, g.httpFields("metrics", t)...)...)
	return stop, nil
}
