package main

import (
	"errors"
	"net"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/session"
)

// startAdmin serves ZooKeeper's AdminServer (admin.serverAddress,
// admin.serverPort, admin.commandURL, admin.idleTimeout): GET
// <commandURL>/<command> answers in JSON. As with ZooKeeper, a port that
// cannot be bound is logged and the server runs on without it.
func startAdmin(addr, commandURL string, idle time.Duration, srv *session.Server, log *zap.Logger) func() {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Warn("problem starting AdminServer; serving clients without it", zap.String("addr", addr), zap.Error(err))
		return func() {}
	}
	hs := &http.Server{
		Handler:           srv.AdminHandler(commandURL),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       idle,
		MaxHeaderBytes:    64 << 10,
	}
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("AdminServer stopped", zap.Error(err))
		}
	}()
	log.Info("AdminServer serving", zap.String("addr", ln.Addr().String()), zap.String("commandURL", commandURL))
	return func() { _ = hs.Close() }
}
