package server

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/internal/base/netguard"
)

// defaultHTTPIdleTimeout is the idle timeout of the HTTP ports when none
// is set: Jetty's default, which ZooKeeper's AdminServer
// (admin.idleTimeout) and Prometheus metrics provider serve with.
const defaultHTTPIdleTimeout = 30 * time.Second

// listenGuard keeps a server's listeners within the process's file
// descriptors (internal/base/netguard): the file limit's division between the
// listeners, and the count of refused connections and failed accepts
// every listener adds to (mntr's zk_connection_rejected). One is made
// when the server starts (runServer); a nil *listenGuard caps nothing and
// counts nothing, for tests that build Config alone.
type listenGuard struct {
	plan     netguard.Plan
	rejected *netguard.Rejections
	log      *zap.Logger
	// report logs the limit and the caps (logPlan), once the server has
	// started: a start that fails says one line, its error.
	report func()
}

// newListenGuard raises the open file limit to the hard limit and divides
// it between the listeners; logPlan says so, with what each listener may
// hold.
func newListenGuard(st Config, log *zap.Logger) *listenGuard {
	soft, hard, _, err := netguard.RaiseFileLimit()
	g := &listenGuard{plan: netguard.NewPlan(soft), rejected: new(netguard.Rejections), log: log}
	p := g.plan
	fields := []zap.Field{
		zap.Uint64("limit", soft), zap.Uint64("hard", hard), zap.Int("reserved", p.Reserve),
		zap.String("client", describeCaps(netguard.Limits{MaxConns: p.Client.MaxConns, MaxConnsPerIP: st.MaxClientCnxns})),
		zap.String("member", describeCaps(p.Member)), zap.String("admin", describeCaps(p.Admin)),
		zap.String("metrics", describeCaps(p.Metrics)), zap.String("pprof", describeCaps(p.Pprof)),
	}
	g.report = func() {
		switch {
		case err != nil:
			log.Warn("the open file limit could not be raised to the hard limit; connections are capped within it", append(fields, zap.Error(err))...)
		case soft == 0:
			log.Info("no open file limit; connections are capped as for "+fmt.Sprint(p.Limit), fields...)
		default:
			log.Info("open file limit raised to the hard limit; connections are capped within it", fields...)
		}
		if st.MaxCnxns > p.Client.MaxConns {
			log.Warn("maxCnxns is above the client ports' share of the open file limit, which caps them",
				zap.Int("maxCnxns", st.MaxCnxns), zap.Int("cap", p.Client.MaxConns))
		}
	}
	return g
}

// logPlan logs the open file limit and each listener's caps.
func (g *listenGuard) logPlan() {
	if g != nil && g.report != nil {
		g.report()
		g.report = nil
	}
}

// describeCaps says what a listener may hold, for the log.
func describeCaps(l netguard.Limits) string {
	if l.MaxConnsPerIP <= 0 {
		return fmt.Sprintf("%d connections, any number per address", l.MaxConns)
	}
	return fmt.Sprintf("%d connections, %d per address", l.MaxConns, l.MaxConnsPerIP)
}

// clientConnLimit is session.Config.ConnLimit: the client ports' share.
func (g *listenGuard) clientConnLimit() int {
	if g == nil {
		return 0
	}
	return g.plan.Client.MaxConns
}

// rejections is where every listener counts (nil: nowhere).
func (g *listenGuard) rejections() *netguard.Rejections {
	if g == nil {
		return nil
	}
	return g.rejected
}

// limits is listener name's share of the plan ("member", "admin",
// "metrics", "pprof"); no caps without a guard.
func (g *listenGuard) limits(name string) netguard.Limits {
	if g == nil {
		return netguard.Limits{}
	}
	switch name {
	case "member":
		return g.plan.Member
	case "admin":
		return g.plan.Admin
	case "metrics":
		return g.plan.Metrics
	case "pprof":
		return g.plan.Pprof
	}
	return netguard.Limits{}
}

// httpTimeouts are an HTTP port's deadlines for idle timeout d (zero or
// less: defaultHTTPIdleTimeout), as a Jetty connector's
// (netguard.IdleTimeouts).
func httpTimeouts(d time.Duration) netguard.HTTPTimeouts {
	if d <= 0 {
		d = defaultHTTPIdleTimeout
	}
	return netguard.IdleTimeouts(d)
}

// serveHTTP serves h on ln as the listener name (TLS with tlsCfg), with
// its caps and timeouts, until the returned func is called. Its accepts
// never stop on an error (netguard.Listener).
func (g *listenGuard) serveHTTP(name string, ln net.Listener, tlsCfg *tls.Config, t netguard.HTTPTimeouts, h http.Handler, log *zap.Logger) func() {
	var served net.Listener = netguard.Wrap(ln, netguard.Config{Name: name, Limits: g.limits(name), Logger: log, Rejected: g.rejections()})
	if tlsCfg != nil {
		served = tls.NewListener(served, tlsCfg)
	}
	hs := t.Server(h, log.Named(name))
	go func() {
		if err := hs.Serve(served); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn(name+" server stopped", zap.Error(err))
		}
	}()
	return func() { _ = hs.Close() }
}

// httpFields are what an HTTP port's "serving" line says of its caps and
// timeouts.
func (g *listenGuard) httpFields(name string, t netguard.HTTPTimeouts) []zap.Field {
	l := g.limits(name)
	return []zap.Field{zap.Int("maxConns", l.MaxConns), zap.Int("maxConnsPerIP", l.MaxConnsPerIP),
		zap.Duration("idleTimeout", t.Idle), zap.Duration("headerTimeout", t.Header)}
}
