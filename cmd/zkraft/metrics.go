package main

import (
	"errors"
	"net"
	"net/http"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/session"
)

// startMetrics serves /metrics in the Prometheus text format, as
// ZooKeeper's PrometheusMetricsProvider does on metricsProvider.httpPort.
func startMetrics(addr string, srv *session.Server, log *zap.Logger) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_ = srv.WriteMetrics(w)
	})
	hs := &http.Server{Handler: mux}
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("metrics server stopped", zap.Error(err))
		}
	}()
	log.Info("metrics serving", zap.String("addr", ln.Addr().String()))
	return func() { _ = hs.Close() }, nil
}
