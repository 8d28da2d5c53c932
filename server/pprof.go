package server

import (
	"net"
	"net/http"
	"net/http/pprof"
	"runtime"
	"time"

	"go.uber.org/zap"
)

// startPprof serves Go's profiles (CPU, heap, goroutine, mutex, block) on
// addr for operators and `go tool pprof`. Mutex and block profiling are
// sampled lightly so they cost little when nobody looks. Its connections
// have the metrics port's deadlines (idle, httpTimeouts: a CPU profile
// that computes for longer is not cut, its writes are what is timed) and
// g's caps.
func startPprof(addr string, g *listenGuard, idle time.Duration, log *zap.Logger) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	runtime.SetMutexProfileFraction(100)
	runtime.SetBlockProfileRate(100000) // one sample per 100µs blocked
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	t := httpTimeouts(idle)
	stop := g.serveHTTP("pprof", ln, nil, t, mux, log)
	log.Info("pprof serving", append([]zap.Field{zap.String("addr", ln.Addr().String())}, g.httpFields("pprof", t)...)...)
	return stop, nil
}
