package server

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/console"
	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/operator"
	"github.com/zkraft/zkraft/session"
)

// consolePrefix is where the console is served on the AdminServer.
const consolePrefix = "/console"

// adminHandler is the AdminServer's handler and, when the console is on,
// the console beside it under /console/ (same address, same server). The
// console's ZooKeeper sessions are in-process connections to srv
// (session.Server.DialInProcess), served as from each browser's address and
// outside the client port's connection limits; clientAddr, this member's
// own client port, is what the page shows and where the ensemble page asks
// this member's srvr. The returned func closes the console's sessions.
func adminHandler(st Config, srv *session.Server, node *ensemble.Node, clientAddr net.Addr, log *zap.Logger) (http.Handler, func()) {
	admin := operator.NewAdmin(srv).Handler(st.AdminCommandURL)
	if !st.ConsoleEnabled {
		return admin, func() {}
	}
	self := loopbackAddr(clientAddr)
	c := console.New(console.Config{
		ClientAddr:       self,
		Dial:             srv.DialInProcess,
		KnownUser:        func(user, password string) bool { return consoleKnows(srv, node, user, password) },
		HeartbeatTimeout: st.ConsoleHeartbeat,
		Writable:         st.ConsoleWritable,
		AllowedHosts:     st.ConsoleAllowedHosts,
		Prefix:           consolePrefix,
		Ensemble:         &ensembleView{node: node, self: self, standaloneAddr: self},
		Logger:           log.Named("console"),
	})
	mux := http.NewServeMux()
	mux.Handle(consolePrefix+"/", c.Handler())
	mux.Handle(consolePrefix, c.Handler())
	mux.Handle("/", admin)
	log.Info("console serving", zap.String("path", consolePrefix+"/"), zap.Bool("writable", st.ConsoleWritable),
		zap.String("clientAddr", self))
	return mux, c.Close
}

// consoleKnows is the console's KnownUser: whether the digest identity
// user:password is one the ensemble knows, the super user's or one an ACL
// in the tree names. Any other is a guess, refused before a session is
// opened. The tree's read lock is held for one map lookup
// (znode.Tree.NamesIdentity); the digest is hashed before it is taken.
func consoleKnows(srv *session.Server, node *ensemble.Node, user, password string) bool {
	ids := srv.DigestIdentities(user + ":" + password)
	for _, id := range ids {
		if id.Scheme == "super" {
			return true
		}
	}
	tree := node.RLockTree()
	defer node.RUnlockTree()
	for _, id := range ids {
		if tree.NamesIdentity(id) {
			return true
		}
	}
	return false
}

// loopbackAddr is the address a process on this host reaches a listener
// at: an unspecified host (0.0.0.0, ::) becomes loopback.
func loopbackAddr(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
		if ip != nil && ip.To4() == nil {
			host = "::1"
		}
	}
	return net.JoinHostPort(host, port)
}

// minConsoleHeartbeat is the shortest console.heartbeatTimeout: an
// open page's heartbeat every second.
const minConsoleHeartbeat = 3 * time.Second

// checkConsole refuses a console without an AdminServer to serve it, and a
// heartbeat timeout too short for a page to keep up with.
func (s *Config) checkConsole() error {
	if s.ConsoleEnabled && s.AdminAddr == "" {
		return fmt.Errorf("the console is served by the AdminServer: give --admin-addr (or leave admin.enableServer on)")
	}
	if s.ConsoleWritable && !s.ConsoleEnabled {
		return fmt.Errorf("--console-writable (console.readOnly=false) needs the console on (--console or console.enabled=true)")
	}
	if d := s.ConsoleHeartbeat; d != 0 && d < minConsoleHeartbeat {
		return fmt.Errorf("--console-heartbeat-timeout (console.heartbeatTimeout) %v: at least %v (an open page sends a heartbeat every third of it)",
			d, minConsoleHeartbeat)
	}
	return nil
}

// consoleKey applies a console.* zoo.cfg key; false if k is not one.
func (s *Config) consoleKey(k, v string) (bool, error) {
	var err error
	switch strings.TrimPrefix(k, "zookeeper.") {
	case "console.enabled":
		s.ConsoleEnabled, err = parseBoolKey(v)
	case "console.readOnly":
		var ro bool
		ro, err = parseBoolKey(v)
		s.ConsoleWritable = !ro
	case "console.heartbeatTimeout":
		s.ConsoleHeartbeat, err = millisOrDuration(v)
	default:
		return false, nil
	}
	return true, err
}

// parseBoolKey reads a zoo.cfg boolean as Java's Boolean.parseBoolean,
// but refuses anything but true or false instead of reading it as false.
func parseBoolKey(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("not true or false")
}
