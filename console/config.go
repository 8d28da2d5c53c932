package console

import (
	"time"

	"go.uber.org/zap"
)

// Config is what a Console needs from the server it runs in.
type Config struct {
	// ClientAddr is the member's client port (host:port) the console's
	// ZooKeeper sessions connect to, normally on loopback.
	ClientAddr string
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
	// IdleTimeout ends a console login, and its ZooKeeper session, after
	// this long without a request (default 30 minutes).
	IdleTimeout time.Duration
	// MaxLogins bounds the console logins open at once (default 64).
	MaxLogins int
	// MaxLoginsPerAddr bounds those from one client address (default 8).
	MaxLoginsPerAddr int
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
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = 30 * time.Minute
	}
	if c.MaxLogins <= 0 {
		c.MaxLogins = 64
	}
	if c.MaxLoginsPerAddr <= 0 {
		c.MaxLoginsPerAddr = 8
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	return c
}
