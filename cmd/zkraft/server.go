package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/backend/audit"

	"github.com/urfave/cli/v2"
	"go.uber.org/zap"

	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/internal/base/gctune"
	"github.com/zkraft/zkraft/internal/security/zktls"
	"github.com/zkraft/zkraft/operator"
	"github.com/zkraft/zkraft/operator/metrics"
	"github.com/zkraft/zkraft/session"
	"github.com/zkraft/zkraft/znode"
)

func serverCommand() *cli.Command {
	return &cli.Command{
		Name:   "server",
		Usage:  "serve the ZooKeeper client protocol (defaults: 127.0.0.1:2181, ./zkraft-data)",
		Flags:  serverFlags(),
		Action: runServer,
	}
}

func runServer(c *cli.Context) error {
	log, err := newLogger(c.String("log-level"), c.String("log-format"))
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()

	st := defaultSettings()
	if path := c.String("config"); path != "" {
		cfg, err := loadZooConfig(path)
		if err != nil {
			return err
		}
		text, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("read config: %w", err)
		}
		st.InitialConfig = string(text)
		if cfg.values["dataDir"] == "" && !c.IsSet("data-dir") {
			// ZooKeeper refuses it too, rather than start on a
			// directory the operator did not choose (here --data-dir
			// may choose it).
			return fmt.Errorf("%s: dataDir is not set", path)
		}
		if err := st.applyZooConfig(cfg, log); err != nil {
			return err
		}
	}
	if err := st.applyFlags(c); err != nil {
		return err
	}
	if err := st.resolveMembers(c); err != nil {
		return err
	}
	if err := st.checkConsole(); err != nil {
		return err
	}
	st.listeners = newListenGuard(st, log)
	if st.FollowZooKeeper {
		if !ensemble.HasState(st.DataDir, st.DataLogDir) {
			return serveFollowing(c, st, log)
		}
		// The cutover is done: the data directory holds the new
		// ensemble's member, whose membership is in its state.
		log.Warn("migration.followZooKeeper is set, but this server cut over already and starts as a member of the zkraft ensemble;" +
			" remove it and ZooKeeper's server.N lines from the configuration")
		st.Members = cutOverMembers(st.Members)
	}
	return serve(c, st, log)
}

// serve runs one member until SIGINT or SIGTERM.
func serve(c *cli.Context, st settings, log *zap.Logger) error {
	// Keep the garbage held between collections bounded as the tree grows
	// (internal/base/gctune); GOGC or GOMEMLIMIT in the environment turn it off.
	gcCtx, stopGC := context.WithCancel(context.Background())
	defer stopGC()
	go gctune.Run(gcCtx)
	if addr := c.String("pprof-addr"); addr != "" {
		stop, err := startPprof(addr, st.listeners, st.MetricsIdleTimeout, log)
		if err != nil {
			return fmt.Errorf("pprof: %w", err)
		}
		defer stop()
	}
	listen, dial, err := memberTransport(st)
	if err != nil {
		return err
	}
	ports, err := bindPorts(st)
	if err != nil {
		return err
	}
	defer ports.close()
	ln, secureLn, metricsLn := ports.client, ports.secure, ports.metrics
	// The registry exists before the member and its server, which report
	// into it as things happen.
	var reg *metrics.Registry
	var nodeMetrics backend.Metrics
	var requests session.RequestObserver
	if st.MetricsAddr != "" {
		reg = metrics.New()
		nodeMetrics, requests = reg.Ensemble(), reg.Requests()
	}
	node, err := ensemble.Open(memberConfig(c, st, listen, dial, nodeMetrics, log))
	if err != nil {
		return fmt.Errorf("start ensemble member: %w", err)
	}
	defer node.Close()

	sasl, tlsCfg, err := clientSecurity(st)
	if err != nil {
		return err
	}
	srv := session.New(sessionConfig(c, st, sasl, map[string]string{"dataDir": st.DataDir, "dataLogDir": node.LogDir()}, requests, log), node)

	if reg != nil {
		stop, err := startMetrics(metricsLn, reg, node, srv, st.listeners, st.MetricsIdleTimeout, log)
		if err != nil {
			return fmt.Errorf("metrics: %w", err)
		}
		defer stop()
	}
	if st.AdminAddr != "" {
		adminTLS, err := adminTLSConfig(st)
		if err != nil {
			return err
		}
		handler, closeConsole := adminHandler(st, srv, node, ln.Addr(), log)
		defer closeConsole()
		defer startAdmin(st.AdminAddr, st.AdminIdleTimeout, adminTLS, handler, st.listeners, log)()
	}
	errc := ports.serve(srv, st.PortUnification, tlsCfg)
	if secureLn != nil {
		log.Info("zkraft serving TLS clients", zap.String("secureClientAddr", secureLn.Addr().String()),
			zap.String("clientAuth", tlsCfg.ClientAuth.String()))
	}
	if st.NoSync {
		log.Warn("forceSync=no: writes are acknowledged before they reach the disk; a power loss on a majority of members can lose them")
	}
	if w := memberQuorumSASLWarning(st); w != "" {
		log.Warn(w)
	}
	st.listeners.logPlan()
	log.Info("zkraft serving",
		zap.String("clientAddr", ln.Addr().String()),
		zap.String("dataDir", st.DataDir),
		zap.String("dataLogDir", node.LogDir()),
		zap.Duration("tickTime", st.TickTime),
		zap.Uint8("serverId", st.ServerID),
		zap.String("mode", node.Mode()),
		zap.String("4lw", strings.Join(st.FourLetterWords, ",")),
		zap.Bool("portUnification", st.PortUnification),
		zap.Bool("skipACL", st.SkipACL))

	if st.Audit {
		auditLog := log.Named(audit.LoggerName)
		audit.Log(auditLog, audit.Event{User: auditUser(true), Operation: "serverStart", Result: "success"})
		defer audit.Log(auditLog, audit.Event{User: auditUser(true), Operation: "serverStop", Result: "invoked"})
	}
	if err := waitForStop(errc, log); err != nil {
		return err
	}
	handOffLeadership(node, st, log)
	_ = srv.Close()
	return nil
}

// serve serves srv's clients on the ports (the client port unified with
// TLS when unified), and returns where a failed Serve reports.
func (p *serverPorts) serve(srv *session.Server, unified bool, tlsCfg *tls.Config) <-chan error {
	errc := make(chan error, 2)
	if unified {
		go func() { errc <- srv.ServeUnified(p.client, tlsCfg) }()
	} else {
		go func() { errc <- srv.Serve(p.client) }()
	}
	if p.secure != nil {
		go func() { errc <- srv.ServeSecure(p.secure, tlsCfg) }()
	}
	return errc
}

// waitForStop waits for SIGINT or SIGTERM (nil), or for serving to fail
// (its error). An accept error does not fail serving (the client ports
// retry it, session.Server.Serve): only a listener closed under the
// server does.
func waitForStop(errc <-chan error, log *zap.Logger) error {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	select {
	case s := <-sig:
		log.Info("shutting down", zap.String("signal", s.String()))
	case err := <-errc:
		if err != nil && !errors.Is(err, net.ErrClosed) {
			return err
		}
	}
	return nil
}

// handOffLeadership hands a leading member's leadership to a follower
// before it goes: a rolling restart, where the others would otherwise
// notice and elect (with the handshake's settle, clients see a pause of
// milliseconds).
func handOffLeadership(node *ensemble.Node, st settings, log *zap.Logger) {
	if node == nil || !node.IsLeader() {
		return
	}
	if err := node.HandOff(4 * st.electionTimeout()); err != nil {
		log.Warn("leadership not handed off; the others will elect", zap.Error(err))
	} else {
		log.Info("leadership handed off")
	}
}

// auditUser is the user the audit log names for the server's own events
// (start, stop, ephemerals deleted with their session): ZooKeeper's login
// user, the OS user running it. "" when the audit log is off.
func auditUser(on bool) string {
	if !on {
		return ""
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "<NA>"
}

// lockDirs are the directories a member keeps to itself: the data
// directory and, when apart, the log directory (two members on one
// raft.db would otherwise meet as a bolt "timeout").
func lockDirs(st settings) []string {
	if st.DataLogDir == "" || filepath.Clean(st.DataLogDir) == filepath.Clean(st.DataDir) {
		return []string{st.DataDir}
	}
	// One directory under two names: locking it twice from this process
	// would find it "in use" (flock locks belong to an open file).
	a, errA := os.Stat(st.DataDir)
	b, errB := os.Stat(st.DataLogDir)
	if errA == nil && errB == nil && os.SameFile(a, b) {
		return []string{st.DataDir}
	}
	return []string{st.DataDir, st.DataLogDir}
}

// clientSecurity loads what the client ports need: the SASL users and
// Kerberos of the JAAS file, and the TLS configuration of
// secureClientPort or client.portUnification (nil without either).
func clientSecurity(st settings) (sasl saslServer, tlsCfg *tls.Config, err error) {
	if st.JAASConfig != "" {
		sasl, err = loadSASLServer(st.JAASConfig, st.JAASSection)
		switch {
		case errors.Is(err, errNoJAASSection) && st.QuorumSASL.Enable:
			// A JAAS file for quorum SASL alone: no client SASL, as
			// ZooKeeper without a Server section.
			sasl, err = saslServer{}, nil
		case err != nil:
			return saslServer{}, nil, fmt.Errorf("SASL: %w", err)
		}
		if sasl.kerberos != nil {
			sasl.kerberos.RemoveHost, sasl.kerberos.RemoveRealm = st.KerberosRemoveHost, st.KerberosRemoveRealm
		}
	}
	if st.SecureClientAddr != "" || st.PortUnification {
		if tlsCfg, err = zktls.ServerConfig(st.TLS); err != nil {
			return saslServer{}, nil, fmt.Errorf("TLS clients (secureClientPort or client.portUnification): %w", err)
		}
	}
	return sasl, tlsCfg, nil
}

// sessionConfig is the client server's configuration from the settings;
// env is what conf and envi report of the directories.
func sessionConfig(c *cli.Context, st settings, sasl saslServer, env map[string]string, requests session.RequestObserver, log *zap.Logger) session.Config {
	return session.Config{
		ServerID:               st.ServerID,
		TickTime:               st.TickTime,
		MinSessionTimeout:      st.MinSessionTimeout,
		MaxSessionTimeout:      st.MaxSessionTimeout,
		MaxClientCnxns:         st.MaxClientCnxns,
		InitLimit:              st.InitLimit,
		SyncLimit:              st.SyncLimit,
		OutstandingLimit:       outstandingLimit(st.OutstandingLimit),
		MaxCnxns:               st.MaxCnxns,
		ConnLimit:              st.listeners.clientConnLimit(),
		Rejected:               st.listeners.rejections(),
		LeaderServesNot:        st.LeaderServesNot,
		MaxBuffer:              st.JuteMaxBuffer,
		SuperDigest:            st.SuperDigest,
		X509SuperUser:          st.X509SuperUser,
		SASLUsers:              sasl.users,
		Kerberos:               sasl.kerberos,
		AllowSASLFailedClients: st.AllowSASLFailed,
		EnforceAuthSchemes:     st.EnforceSchemes,
		SASLSuperUser:          st.SASLSuperUser,
		FourLetter:             operator.FourLetter{},
		FourLetterWhitelist:    st.FourLetterWords,
		LinearizableReads:      c.Bool("linearizable-reads"),
		ReconfigEnabled:        st.ReconfigEnabled,
		ReadOnlyMode:           st.ReadOnlyMode,
		Env:                    env,
		InitialConfig:          st.InitialConfig,
		Audit:                  st.Audit,
		AdminSnapshotInterval:  st.AdminRateLimit,
		Logger:                 log,
		Requests:               requests,
	}
}

// memberConfig is the ensemble member's configuration from the settings.
func memberConfig(c *cli.Context, st settings, listen func(string) (net.Listener, error), dial ensemble.Dialer, m backend.Metrics, log *zap.Logger) ensemble.Config {
	return ensemble.Config{
		Metrics:           m,
		Listen:            listen,
		MemberConns:       st.listeners.limits("member"),
		Rejected:          st.listeners.rejections(),
		Dial:              dial,
		ID:                st.ServerID,
		DataDir:           st.DataDir,
		LogDir:            st.DataLogDir,
		NoSync:            st.NoSync,
		TickTime:          st.TickTime,
		Tree:              znode.Options{ExtendedTypes: st.ExtendedTypes, EnforceQuota: st.EnforceQuota, SkipACL: st.SkipACL},
		SnapshotThreshold: st.SnapCount,
		SnapshotBytes:     st.SnapSizeLimit,
		FsyncWarning:      st.FsyncWarning,
		ReapInterval:      st.ContainerInterval,
		Logger:            log,
		Peers:             sortPeers(st.Members),
		ElectionTimeout:   st.electionTimeout(),
		Join:              c.Bool("join"),
		AuditUser:         auditUser(st.Audit),
	}
}

// serverPorts are a server's listening ports and its data directories'
// locks.
type serverPorts struct {
	client, secure, metrics net.Listener // secure and metrics may be nil
	unlock                  []func()
}

// bindPorts binds the client ports first: a port in use is reported
// before anything is created on disk, and connections that come
// meanwhile wait in the listen backlog until the server serves them.
// The metrics port too: ZooKeeper does not start when its metrics
// provider cannot bind it. Then it locks the data directories.
func bindPorts(st settings) (_ *serverPorts, err error) {
	p := &serverPorts{}
	defer func() {
		if err != nil {
			p.close()
		}
	}()
	if p.client, err = session.Listen(st.ClientAddr); err != nil {
		return nil, err
	}
	if st.SecureClientAddr != "" {
		if p.secure, err = session.Listen(st.SecureClientAddr); err != nil {
			return nil, err
		}
	}
	if st.MetricsAddr != "" {
		if p.metrics, err = net.Listen("tcp", st.MetricsAddr); err != nil {
			return nil, fmt.Errorf("metrics: %w", err)
		}
	}
	for _, dir := range lockDirs(st) {
		unlock, err := lockDataDir(dir)
		if err != nil {
			return nil, err
		}
		p.unlock = append(p.unlock, unlock)
	}
	return p, nil
}

// close closes the ports and releases the locks.
func (p *serverPorts) close() {
	for _, l := range []net.Listener{p.client, p.secure, p.metrics} {
		if l != nil {
			l.Close()
		}
	}
	for i := len(p.unlock) - 1; i >= 0; i-- {
		p.unlock[i]()
	}
}
