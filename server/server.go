package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/backend/audit"
	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/internal/base/gctune"
	"github.com/zkraft/zkraft/internal/zookeeper/learner"
	"github.com/zkraft/zkraft/operator/metrics"
	"github.com/zkraft/zkraft/session"
)

// Server is one running zkraft server: every listener (client ports,
// AdminServer and console, metrics, pprof, the member port) and the
// backend the clients are served from, an ensemble member or, during a
// live migration, an observer of a running ZooKeeper ensemble that may
// cut over into a member (lifecycle.go). Start assembles it, Close takes
// it down; Run does both around a context.
type Server struct {
	cfg Config
	log *zap.Logger
	srv *session.Server
	// node is the member when the server started as one; fol the
	// following state when it follows ZooKeeper.
	node *ensemble.Node
	fol  *following
	// clientAddr is the client port's address.
	clientAddr net.Addr
	errc       <-chan error
	// stops undo Start's steps, last first.
	stops     []func()
	closeOnce sync.Once
	closeErr  error
}

// Start assembles and starts the server cfg describes (Load reads one as
// the server command does; DefaultConfig is a standalone member on
// 127.0.0.1:2181): it binds the ports first, so a port in use is reported
// before anything is created on disk, opens the member (or starts
// following ZooKeeper, migration.followZooKeeper), and serves clients
// until Close. log may be nil.
func Start(cfg Config, log *zap.Logger) (_ *Server, err error) {
	if log == nil {
		log = zap.NewNop()
	}
	s := &Server{cfg: cfg, log: log}
	defer func() {
		if err != nil {
			s.unwind()
		}
	}()
	if s.cfg.listeners == nil {
		s.cfg.listeners = newListenGuard(s.cfg, log)
	}
	st := s.cfg
	if !st.KeepGC {
		// Keep the garbage held between collections bounded as the tree
		// grows (internal/base/gctune); GOGC or GOMEMLIMIT in the
		// environment turn it off.
		ctx, cancel := context.WithCancel(context.Background())
		go gctune.Run(ctx)
		s.push(cancel)
	}
	if st.PprofAddr != "" {
		stop, err := startPprof(st.PprofAddr, st.listeners, st.MetricsIdleTimeout, log)
		if err != nil {
			return nil, fmt.Errorf("pprof: %w", err)
		}
		s.push(stop)
	}
	following := false
	if st.FollowZooKeeper {
		if ensemble.HasState(st.DataDir, st.DataLogDir) {
			// The cutover is done: the data directory holds the new
			// ensemble's member, whose membership is in its state.
			log.Warn("migration.followZooKeeper is set, but this server cut over already and starts as a member of the zkraft ensemble;" +
				" remove it and ZooKeeper's server.N lines from the configuration")
			st.Members = cutOverMembers(st.Members)
		} else {
			following = true
		}
	}
	var lcfg learner.Config
	if following {
		if lcfg, err = LearnerConfig(st, st.ConfigPath, log); err != nil {
			return nil, err
		}
	}
	ports, err := bindPorts(st)
	if err != nil {
		return nil, err
	}
	s.push(ports.close)
	s.clientAddr = ports.client.Addr()
	// The registry exists before the backend and its server, which report
	// into it as things happen.
	var reg *metrics.Registry
	var nodeMetrics backend.Metrics
	var requests session.RequestObserver
	if st.MetricsAddr != "" {
		reg = metrics.New()
		nodeMetrics, requests = reg.Ensemble(), reg.Requests()
	}
	var be backend.Backend
	logDir := st.DataDir
	if following {
		if s.fol, err = openFollowing(st, lcfg, log); err != nil {
			return nil, err
		}
		be = s.fol.b
	} else {
		if s.node, err = openMember(st, nodeMetrics, log, nil); err != nil {
			return nil, err
		}
		node := s.node
		s.push(func() { _ = node.Close() })
		be, logDir = node, node.LogDir()
	}
	sasl, tlsCfg, err := clientSecurity(st)
	if err != nil {
		return nil, err
	}
	s.srv = session.New(sessionConfig(st, sasl, map[string]string{"dataDir": st.DataDir, "dataLogDir": logDir}, requests, log), be)
	// A step below that fails must close it too: from New on it holds
	// goroutines and, on Linux, its parker's epoll set and pipe. Close
	// closes it earlier (after BeginClose); a second Close does nothing.
	srv := s.srv
	s.push(func() { _ = srv.Close() })
	if reg != nil {
		stop, err := startMetrics(ports.metrics, reg, s.node, s.srv, st.listeners, st.MetricsIdleTimeout, log)
		if err != nil {
			return nil, fmt.Errorf("metrics: %w", err)
		}
		s.push(stop)
	}
	if s.fol != nil {
		if err := s.fol.start(s, reg); err != nil {
			return nil, err
		}
	} else if err := s.startAdmin(); err != nil {
		return nil, err
	}
	s.errc = ports.serve(s.srv, st.PortUnification, tlsCfg)
	s.logStarted(ports, tlsCfg, lcfg)
	return s, nil
}

// startAdmin serves a member's AdminServer, with the console when it is
// on.
func (s *Server) startAdmin() error {
	st := s.cfg
	if st.AdminAddr == "" {
		return nil
	}
	adminTLS, err := adminTLSConfig(st)
	if err != nil {
		return err
	}
	handler, closeConsole := adminHandler(st, s.srv, s.node, s.clientAddr, s.log)
	s.push(closeConsole)
	s.push(startAdmin(st.AdminAddr, st.AdminIdleTimeout, adminTLS, guardAdmin(st, handler), st.listeners, s.log))
	return nil
}

// logStarted logs what an operator checks once the server serves.
func (s *Server) logStarted(ports *serverPorts, tlsCfg *tls.Config, lcfg learner.Config) {
	st, log := s.cfg, s.log
	if ports.secure != nil && tlsCfg != nil {
		log.Info("zkraft serving TLS clients", zap.String("secureClientAddr", ports.secure.Addr().String()),
			zap.String("clientAuth", tlsCfg.ClientAuth.String()))
	}
	if st.NoSync {
		log.Warn("forceSync=no: writes are acknowledged before they reach the disk; a power loss on a majority of members can lose them")
	}
	if w := memberQuorumSASLWarning(st); w != "" && s.fol == nil {
		log.Warn(w)
	}
	st.listeners.logPlan()
	if s.fol != nil {
		log.Info("zkraft serving as an Observer of a ZooKeeper ensemble",
			zap.String("clientAddr", s.clientAddr.String()), zap.Strings("zookeeper", lcfg.Servers),
			zap.Int64("serverId", st.ServerID), zap.String("dataDir", st.DataDir))
		return
	}
	log.Info("zkraft serving",
		zap.String("clientAddr", s.clientAddr.String()),
		zap.String("dataDir", st.DataDir),
		zap.String("dataLogDir", s.node.LogDir()),
		zap.Duration("tickTime", st.TickTime),
		zap.Int64("serverId", st.ServerID),
		zap.String("mode", s.node.Mode()),
		zap.String("4lw", strings.Join(st.FourLetterWords, ",")),
		zap.Bool("portUnification", st.PortUnification),
		zap.Bool("skipACL", st.SkipACL))
	if st.Audit {
		audit.Log(log.Named(audit.LoggerName), audit.Event{User: auditUser(true), Operation: "serverStart", Result: "success"})
	}
}

// ClientAddr is the client port's address (the port chosen, when the
// configuration asked for port 0).
func (s *Server) ClientAddr() string { return s.clientAddr.String() }

// Member is the ensemble member served now: the one the server started
// as, or the one a following server cut over into; nil while it follows
// ZooKeeper.
func (s *Server) Member() *ensemble.Node {
	if s.fol != nil {
		return s.fol.mig.member()
	}
	return s.node
}

// State is the backend's place in its lifecycle.
func (s *Server) State() State {
	if s.fol != nil {
		return s.fol.mig.state()
	}
	return StateMember
}

// Err reports a client port that stopped serving (nil: Close stopped it).
func (s *Server) Err() <-chan error { return s.errc }

// Close takes the server down: a leading member hands its leadership to
// a follower first (a rolling restart's pause is then milliseconds),
// every client connection closes (sessions live on, to resume elsewhere
// or here after a restart), a following server saves the tree it
// followed, and every listener and the member close. It returns what
// could not be saved.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		handOffLeadership(s.Member(), s.cfg, s.log)
		if s.node != nil {
			// The readers the session server waits for below may be
			// waiting for a leader to forward a write to.
			s.node.BeginClose()
		}
		if s.srv != nil {
			_ = s.srv.Close()
		}
		if s.fol != nil {
			s.closeErr = s.fol.stop()
		}
		if s.cfg.Audit && s.fol == nil {
			audit.Log(s.log.Named(audit.LoggerName), audit.Event{User: auditUser(true), Operation: "serverStop", Result: "invoked"})
		}
		s.unwind()
	})
	return s.closeErr
}

// push adds a step for Close (or a failed Start) to undo.
func (s *Server) push(stop func()) { s.stops = append(s.stops, stop) }

// unwind undoes Start's steps, last first.
func (s *Server) unwind() {
	for i := len(s.stops) - 1; i >= 0; i-- {
		s.stops[i]()
	}
	s.stops = nil
}

// Run starts the server cfg describes and serves until ctx is done (the
// command line cancels it on SIGINT or SIGTERM, with the signal as its
// cause) or a client port fails, then closes it.
func Run(ctx context.Context, cfg Config, log *zap.Logger) error {
	cfg.startCancel = ctx.Done()
	s, err := Start(cfg, log)
	if errors.Is(err, ensemble.ErrStartCancelled) {
		log.Info("shutting down before the ensemble formed", zap.NamedError("why", context.Cause(ctx)))
		return nil
	}
	if err != nil {
		return err
	}
	var runErr error
	select {
	case <-ctx.Done():
		s.log.Info("shutting down", zap.NamedError("why", context.Cause(ctx)))
	case err := <-s.errc:
		if err != nil && !errors.Is(err, net.ErrClosed) {
			runErr = err
		}
	}
	return errors.Join(runErr, s.Close())
}
