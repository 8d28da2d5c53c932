package server

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/internal/zookeeper/learner"
	"github.com/zkraft/zkraft/internal/zookeeper/observer"
	"github.com/zkraft/zkraft/operator"
	"github.com/zkraft/zkraft/operator/metrics"
)

// following is a server that follows a running ZooKeeper ensemble as one
// of its Observers (migration.followZooKeeper) and serves clients from
// it: reads from the followed tree, writes and sessions forwarded to
// ZooKeeper's leader (internal/zookeeper/observer). On Close it saves the
// followed tree in dataDir, and starts from it the next time, so the
// leader syncs it by DIFF. A live migration's cutover (migration) makes
// it a member of a new zkraft ensemble.
type following struct {
	b         *observer.Backend
	statePath string
	mig       *migration
	cancel    context.CancelFunc
	followed  chan struct{} // closed once the learner stopped
}

// openFollowing opens the observer, from the tree saved in st's data
// directory or from nothing when there is none.
func openFollowing(st Config, lcfg learner.Config, log *zap.Logger) (*following, error) {
	path := filepath.Join(st.DataDir, FollowState)
	b, err := OpenObserver(lcfg, path, log)
	if err != nil {
		return nil, err
	}
	b.SetMembers(st.Members)
	return &following{b: b, statePath: path}, nil
}

// OpenObserver starts an observer of ZooKeeper (zkraft migrate follow
// runs one) from the tree saved at path, or from nothing when
// there is none.
func OpenObserver(cfg learner.Config, path string, log *zap.Logger) (*observer.Backend, error) {
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

// start follows ZooKeeper's leader, dropping the clients when the
// connection to it ends (a resync may replace the tree without firing
// watches), and serves the AdminServer with the cutover's commands.
func (f *following) start(s *Server, reg *metrics.Registry) error {
	st := s.cfg
	// What can fail comes before the follow loop starts: a failed Start
	// stops nothing of it (stop saves the tree, and only Close calls it).
	var adminTLS *tls.Config
	if st.AdminAddr != "" {
		var err error
		if adminTLS, err = adminTLSConfig(st); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel, f.followed = cancel, make(chan struct{})
	go func() {
		defer close(f.followed)
		_ = f.b.Run(ctx, func() { s.srv.DropClients("the connection to ZooKeeper's leader ended") })
	}()
	admin := operator.NewAdmin(s.srv)
	f.mig = &migration{st: st, log: s.log, b: f.b, srv: s.srv, admin: admin, metrics: reg, life: lifecycle{state: StateFollowing}}
	s.push(f.mig.close)
	if st.AdminAddr == "" {
		s.log.Warn("no AdminServer (admin.serverPort): zkraft migrate cutover cannot reach this server")
		return nil
	}
	handler := guardAdmin(st, f.mig.handler(st.AdminCommandURL, admin.Handler(st.AdminCommandURL)))
	s.push(startAdmin(st.AdminAddr, st.AdminIdleTimeout, adminTLS, handler, st.listeners, s.log))
	return nil
}

// stop stops following and saves the followed tree, unless the server
// cut over (the member's state is in dataDir then).
func (f *following) stop() error {
	if f.cancel == nil {
		return nil
	}
	f.cancel()
	<-f.followed
	if f.b.HandedOver() {
		return nil
	}
	return SaveFollowing(f.b.Learner(), f.statePath)
}

// member is the new ensemble's member once the server cut over, else
// nil.
func (m *migration) member() *ensemble.Node {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.node
}

// state is the server's place in its lifecycle.
func (m *migration) state() State {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.life.state
}

// close closes the new ensemble's member, if the server cut over.
func (m *migration) close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.node != nil {
		_ = m.node.Close()
	}
}
