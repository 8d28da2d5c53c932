package console

import (
	"net"
	"time"

	"go.uber.org/zap"
)

// Config is what a Console needs from the server it runs in.
type Config struct {
	// ClientAddr is the member's client port (host:port): shown on the
	// page, and dialled over TCP when Dial is nil.
	ClientAddr string
	// Dial opens a connection to the member's ZooKeeper server for a
	// session acting for a browser at remoteIP, which is the session's
	// ip identity. cmd/zkraft gives session.Server.DialInProcess: the
	// console's sessions then take none of the client port's connection
	// places (maxClientCnxns, maxCnxns) and an ip ACL sees the browser's
	// address. Nil dials ClientAddr over TCP (a console in front of a
	// server in another process): its sessions then count against that
	// port's limits, and their ip identity is the console's own address.
	Dial func(remoteIP string) (net.Conn, error)
	// KnownUser reports whether the digest identity user:password is one
	// the ensemble knows: the super user's, or one an ACL in the tree
	// names. A login as any other is a failed login: refused before a
	// ZooKeeper session is opened (no replicated write) and counted by
	// the throttle. It is called once per login attempt that the
	// throttle lets through, so it must be cheap. Nil: every identity is
	// known, ZooKeeper's own rule (any password authenticates, as its
	// own identity).
	KnownUser func(user, password string) bool
	// Writable enables create, set, delete and setACL; without it the
	// console only reads.
	Writable bool
	// AllowedHosts are the host names (besides IP addresses, localhost and
	// this machine's name) a request's Host header may carry; others are
	// refused, so a page on another site cannot reach the console through
	// DNS rebinding.
	AllowedHosts []string
	// Prefix is the URL path the console is mounted under ("/console").
	Prefix string
	// SessionTimeout is the timeout the console asks for its ZooKeeper
	// sessions (default 30 s).
	SessionTimeout time.Duration
	// HeartbeatTimeout ends a login, and its ZooKeeper sessions, once its
	// browser has been silent this long: no request, no heartbeat (an
	// open page sends one every third of this, in hidden tabs too) and
	// no live stream open (default 90 s). A closed tab's login so ends
	// within this bound.
	HeartbeatTimeout time.Duration
	// IdleTimeout ends a login, and its ZooKeeper session, after this
	// long without a request of the user's (heartbeats do not count; an
	// open live stream holds it) (default 30 minutes).
	IdleTimeout time.Duration
	// MaxLogins bounds the console logins open at once (default 64).
	MaxLogins int
	// MaxAnonymousLogins bounds the anonymous ones among them (default a
	// quarter of MaxLogins), so that visitors without credentials never
	// take the room of the users with them.
	MaxAnonymousLogins int
	// MaxLoginsPerUser bounds the logins of one digest user (default 8).
	MaxLoginsPerUser int
	// Ensemble tells the ensemble page about the members; nil shows none.
	Ensemble EnsembleSource
	// Logger receives the console's log lines (default: none).
	Logger *zap.Logger
}

// withDefaults fills in the zero fields.
func (c Config) withDefaults() Config {
	if c.Prefix == "" {
		c.Prefix = "/console"
	}
	if c.SessionTimeout <= 0 {
		c.SessionTimeout = 30 * time.Second
	}
	if c.HeartbeatTimeout <= 0 {
		c.HeartbeatTimeout = DefaultHeartbeatTimeout
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = 30 * time.Minute
	}
	if c.MaxLogins <= 0 {
		c.MaxLogins = 64
	}
	if c.MaxAnonymousLogins <= 0 {
		c.MaxAnonymousLogins = max(c.MaxLogins/4, 1)
	}
	if c.MaxLoginsPerUser <= 0 {
		c.MaxLoginsPerUser = 8
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	return c
}

// DefaultHeartbeatTimeout is Config.HeartbeatTimeout's default. It is
// three heartbeats, and more than the minute a browser may hold back a
// hidden tab's timers (Chrome's intensive throttling), so an open tab is
// never taken for a closed one.
const DefaultHeartbeatTimeout = 90 * time.Second
