package main

import (
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"time"

	"go.uber.org/zap"
)

// startAdmin serves ZooKeeper's AdminServer (admin.serverAddress,
// admin.serverPort, admin.idleTimeout) with handler (adminHandler: GET
// <commandURL>/<command> answers in JSON, and the console when it is on).
// With tlsCfg (admin.forceHttps) it serves HTTPS only. As with ZooKeeper,
// a port that cannot be bound is logged and the server runs on without it.
func startAdmin(addr string, idle time.Duration, tlsCfg *tls.Config, handler http.Handler, log *zap.Logger) func() {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Warn("problem starting AdminServer; serving clients without it", zap.String("addr", addr), zap.Error(err))
		return func() {}
	}
	if tlsCfg != nil {
		ln = tls.NewListener(ln, tlsCfg)
	}
	hs := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       idle,
		MaxHeaderBytes:    64 << 10,
	}
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("AdminServer stopped", zap.Error(err))
		}
	}()
	log.Info("AdminServer serving", zap.String("addr", ln.Addr().String()), zap.Bool("https", tlsCfg != nil))
	return func() { _ = hs.Close() }
}
