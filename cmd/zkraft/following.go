package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"
	"go.uber.org/zap"

	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/internal/zookeeper/learner"
	"github.com/zkraft/zkraft/internal/zookeeper/observer"
	"github.com/zkraft/zkraft/operator"
	"github.com/zkraft/zkraft/operator/metrics"
	"github.com/zkraft/zkraft/session"
)

// serveFollowing runs a server that follows a running ZooKeeper ensemble
// as one of its Observers (migration.followZooKeeper) and serves clients
// from it, until SIGINT or SIGTERM: reads from the followed tree, writes
// and sessions forwarded to ZooKeeper's leader (internal/zookeeper/observer). On
// exit it saves the followed tree in dataDir, and starts from it the next
// time, so the leader syncs it by DIFF.
func serveFollowing(c *cli.Context, st settings, log *zap.Logger) error {
	lcfg, err := learnerConfig(st, c.String("config"), log)
	if err != nil {
		return err
	}
	ports, err := bindPorts(st)
	if err != nil {
		return err
	}
	defer ports.close()
	ln, metricsLn := ports.client, ports.metrics
	statePath := filepath.Join(st.DataDir, followState)
	b, err := openFollowing(lcfg, statePath, log)
	if err != nil {
		return err
	}
	b.SetMembers(st.Members)
	sasl, tlsCfg, err := clientSecurity(st)
	if err != nil {
		return err
	}
	var reg *metrics.Registry
	var requests session.RequestObserver
	if metricsLn != nil {
		reg = metrics.New()
		requests = reg.Requests()
	}
	srv := session.New(sessionConfig(c, st, sasl, map[string]string{"dataDir": st.DataDir, "dataLogDir": st.DataDir}, requests, log), b)
	if reg != nil {
		stop, err := startMetrics(metricsLn, reg, nil, srv, st.listeners, st.MetricsIdleTimeout, log)
		if err != nil {
			return fmt.Errorf("metrics: %w", err)
		}
		defer stop()
	}
	ctx, cancel := context.WithCancel(context.Background())
	followed := make(chan struct{})
	go func() {
		defer close(followed)
		_ = b.Run(ctx, func() { srv.DropClients("the connection to ZooKeeper's leader ended") })
	}()
	admin := operator.NewAdmin(srv)
	mig := &migration{c: c, st: st, log: log, b: b, srv: srv, admin: admin, metrics: reg, state: stateFollowing}
	defer mig.close()
	if st.AdminAddr != "" {
		adminTLS, err := adminTLSConfig(st)
		if err != nil {
			cancel()
			return err
		}
		defer startAdmin(st.AdminAddr, st.AdminIdleTimeout, adminTLS, mig.handler(st.AdminCommandURL, admin.Handler(st.AdminCommandURL)), st.listeners, log)()
	} else {
		log.Warn("no AdminServer (admin.serverPort): zkraft migrate cutover cannot reach this server")
	}
	errc := ports.serve(srv, st.PortUnification, tlsCfg)
	st.listeners.logPlan()
	log.Info("zkraft serving as an Observer of a ZooKeeper ensemble",
		zap.String("clientAddr", ln.Addr().String()), zap.Strings("zookeeper", lcfg.Servers),
		zap.Uint8("serverId", st.ServerID), zap.String("dataDir", st.DataDir))
	runErr := waitForStop(errc, log)
	handOffLeadership(mig.member(), st, log)
	_ = srv.Close()
	cancel()
	<-followed
	if b.HandedOver() {
		return runErr // the member's state is in dataDir now
	}
	if err := saveFollowing(b.Learner(), statePath); err != nil {
		return errors.Join(runErr, err)
	}
	return runErr
}

// openFollowing starts from the tree saved at path, or from nothing when
// there is none.
func openFollowing(cfg learner.Config, path string, log *zap.Logger) (*observer.Backend, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return observer.New(cfg, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("follow ZooKeeper: %w", err)
	}
	defer f.Close()
	var r io.Reader = bufio.NewReaderSize(f, 1<<16)
	b, err := observer.New(cfg, r)
	if err != nil {
		return nil, fmt.Errorf("follow ZooKeeper: %s (delete it to sync from nothing): %w", path, err)
	}
	log.Info("resuming from the saved tree", zap.String("file", path), zap.String("zxid", fmt.Sprintf("%#x", b.LastZxid())))
	return b, nil
}

// member is the new ensemble's member once the server cut over, else
// nil.
func (m *migration) member() *ensemble.Node {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.node
}

// close closes the new ensemble's member, if the server cut over.
func (m *migration) close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.node != nil {
		_ = m.node.Close()
	}
}
