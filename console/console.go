package console

import (
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/zkraft/zkraft/internal/base/turns"
)

// Console serves the web console. Create it with New, mount Handler, and
// Close it to end every login's ZooKeeper session.
type Console struct {
	cfg      Config
	logins   *loginStore
	throttle *loginThrottle // failed logins, per address and per user
	lead     *leaderLog
	ops      *opStats     // the latencies of the console's own requests
	jobs     *jobStore    // the logins' background subtree operations
	turns    *turns.Turns // the large answers being made (turns.go)
	mux      *http.ServeMux

	stop     chan struct{}
	stopOnce sync.Once
}

// New returns a console for cfg and starts its housekeeping (logins whose
// browser went away or that idled are ended, leadership changes noted).
func New(cfg Config) *Console {
	cfg = cfg.withDefaults()
	c := &Console{
		cfg:      cfg,
		logins:   newLoginStore(cfg.MaxLogins, cfg.MaxAnonymousLogins, cfg.MaxLoginsPerUser),
		throttle: newLoginThrottle(),
		lead:     &leaderLog{},
		ops:      &opStats{},
		jobs:     newJobStore(),
		turns:    turns.New(maxTurns),
		stop:     make(chan struct{}),
	}
	c.mux = c.routes()
	go c.housekeep()
	return c
}

// Handler serves the console under Config.Prefix, to requests whose Host
// header names this server (hostAllowed).
func (c *Console) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostAllowed(r.Host, c.cfg.AllowedHosts) {
			fail(w, http.StatusMisdirectedRequest, "the console does not answer for host "+r.Host+
				": add it to console.allowedHosts (--console-allowed-hosts)")
			return
		}
		c.mux.ServeHTTP(w, r)
	})
}

// Close ends every login and its ZooKeeper sessions.
func (c *Console) Close() {
	c.stopOnce.Do(func() { close(c.stop) })
	c.logins.closeAll()
}

// routes maps the console's URLs: the page and its assets, and the JSON API
// under <prefix>/api/.
func (c *Console) routes() *http.ServeMux {
	p := strings.TrimSuffix(c.cfg.Prefix, "/")
	mux := http.NewServeMux()
	mux.Handle("GET "+p+"/", c.assets(p))
	mux.HandleFunc("GET "+p, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, p+"/", http.StatusMovedPermanently)
	})
	mux.HandleFunc("POST "+p+"/api/login", c.handleLogin)
	mux.HandleFunc("POST "+p+"/api/logout", c.write(c.handleLogout, false))
	mux.HandleFunc("POST "+p+"/api/heartbeat", c.handleHeartbeat)
	mux.HandleFunc("GET "+p+"/api/whoami", c.read(c.handleWhoAmI))
	mux.HandleFunc("GET "+p+"/api/children", c.read(c.handleChildren))
	mux.HandleFunc("GET "+p+"/api/node", c.read(c.handleNode))
	mux.HandleFunc("GET "+p+"/api/search", c.read(c.handleSearch))
	mux.HandleFunc("GET "+p+"/api/subtree", c.read(c.handleSubtree))
	mux.HandleFunc("GET "+p+"/api/events", c.read(c.handleEvents))
	mux.HandleFunc("GET "+p+"/api/ensemble", c.read(c.handleEnsemble))
	mux.HandleFunc("GET "+p+"/api/sessions", c.read(c.handleSessions))
	mux.HandleFunc("POST "+p+"/api/create", c.write(c.handleCreate, true))
	mux.HandleFunc("POST "+p+"/api/set", c.write(c.handleSet, true))
	mux.HandleFunc("POST "+p+"/api/delete", c.write(c.handleDelete, true))
	mux.HandleFunc("POST "+p+"/api/setacl", c.write(c.handleSetACL, true))
	c.subtreeRoutes(mux, p)
	return mux
}

// housekeep ends the logins whose browser went away or that idled, forgets
// old failed logins and notes leadership changes until Close.
func (c *Console) housekeep() {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	ended := func(l *login, why string) {
		c.cfg.Logger.Sugar().Infow("console login ended", "user", l.user, "from", l.from, "why", why)
	}
	lastSweep := time.Now()
	for {
		select {
		case <-c.stop:
			return
		case now := <-tick.C:
			c.logins.expire(now, c.cfg.HeartbeatTimeout, c.cfg.IdleTimeout, ended)
			if now.Sub(lastSweep) >= time.Minute {
				c.throttle.sweep(now)
				lastSweep = now
			}
			if c.cfg.Ensemble != nil {
				id, term := c.cfg.Ensemble.Leadership()
				c.lead.note(id, term, now)
			}
		}
	}
}
