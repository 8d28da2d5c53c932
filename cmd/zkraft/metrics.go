package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/internal/metrics"
	"github.com/zkraft/zkraft/session"
)

// headerTimeout bounds the time a client of the metrics and pprof ports
// has to send its request's headers: a connection that sends them slowly,
// or never, is closed, so such connections cannot pile up.
var headerTimeout = 10 * time.Second

// startMetrics serves reg on /metrics in the Prometheus text format, as
// ZooKeeper's PrometheusMetricsProvider does on metricsProvider.httpPort,
// on ln (bound before the member opened its files, so a port in use stops
// the start first), once node and srv are there to be read at scrape time.
func startMetrics(ln net.Listener, reg *metrics.Registry, node *ensemble.Node, srv *session.Server, log *zap.Logger) (func(), error) {
	if err := reg.Watch(node, srv); err != nil {
		return nil, fmt.Errorf("register metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", reg.Handler())
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: headerTimeout, MaxHeaderBytes: 64 << 10}
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("metrics server stopped", zap.Error(err))
		}
	}()
	log.Info("metrics serving", zap.String("addr", ln.Addr().String()))
	return func() { _ = hs.Close() }, nil
}
