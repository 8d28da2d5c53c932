package main

import (
	"errors"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime"

	"go.uber.org/zap"
)

// startPprof serves Go's profiles (CPU, heap, goroutine, mutex, block) on
// addr for operators and `go tool pprof`. Mutex and block profiling are
// sampled lightly so they cost little when nobody looks.
func startPprof(addr string, log *zap.Logger) (func(), error) {
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
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: headerTimeout, MaxHeaderBytes: 64 << 10}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("pprof server stopped", zap.Error(err))
		}
	}()
	log.Info("pprof serving", zap.String("addr", ln.Addr().String()))
	return func() { _ = srv.Close() }, nil
}
