package server

import (
	"crypto/tls"
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
//
// Like ZooKeeper's Jetty connector, it drops a connection on which nothing
// moves for the idle timeout: waiting for headers (at most 10 s), for a
// body that never comes, for the next request, or for a client to read
// (httpTimeouts); the console's event streams write at least every 15 s
// and run on. Its connections are capped by g (the AdminServer's share of
// the file limit, in all and per address), and its accepts never stop.
func startAdmin(addr string, idle time.Duration, tlsCfg *tls.Config, handler http.Handler, g *listenGuard, log *zap.Logger) func() {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Warn("problem starting AdminServer; serving clients without it", zap.String("addr", addr), zap.Error(err))
		return func() {}
	}
	t := httpTimeouts(idle)
	stop := g.serveHTTP("admin", ln, tlsCfg, t, handler, log)
	log.Info("AdminServer serving", append([]zap.Field{zap.String("addr", ln.Addr().String()), zap.Bool("https", tlsCfg != nil)},
		g.httpFields("admin", t)...)...)
	return stop
}
