package server

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/zkraft/zkraft/internal/security/zktls"
	"github.com/zkraft/zkraft/internal/zookeeper/learner"
	"github.com/zkraft/zkraft/znode"
	"go.uber.org/zap"
)

// LearnerConfig is the configuration of an Observer of the ZooKeeper
// ensemble the settings name: ZooKeeper's voting servers are the
// addresses to try, this server's line must be an observer's (a
// participant's would be counted in ZooKeeper's quorum), and initLimit
// and syncLimit give the timeouts.
func LearnerConfig(st Config, config string, log *zap.Logger) (_ learner.Config, err error) {
	cfg := learner.Config{
		ID: st.ServerID, Options: st.treeOptions(), Logger: log,
		InitTimeout: st.TickTime * time.Duration(st.InitLimit), SyncTimeout: st.TickTime * time.Duration(st.SyncLimit),
	}
	for _, m := range st.Members {
		switch {
		case m.ID == st.ServerID && !m.Observer:
			return learner.Config{}, fmt.Errorf("server.%d is not an observer line: add :observer to it, as ZooKeeper's servers have it", m.ID)
		case !m.Observer:
			cfg.Servers = append(cfg.Servers, m.Addr)
		}
	}
	if len(cfg.Servers) == 0 {
		return learner.Config{}, fmt.Errorf("%s names no ZooKeeper server to follow (server.N lines)", config)
	}
	login, err := quorumLearnerLogin(st)
	if err != nil {
		return learner.Config{}, err
	}
	cfg.SASL, cfg.Kerberos = login.digest, login.kerberos
	if st.SSLQuorum {
		// The ensemble's quorum TLS, as a ZooKeeper observer's: the key
		// store's certificate presented, the leader's verified against the
		// trust store (and its host per ssl.quorum.hostnameVerification).
		_, client, err := zktls.MemberConfigs(st.QuorumTLS, st.QuorumVerifyHost)
		if err != nil {
			return learner.Config{}, fmt.Errorf("sslQuorum: %w", err)
		}
		cfg.TLS = client
	}
	return cfg, nil
}

// treeOptions are the tree's own options as the settings give them (the
// -D properties of a ZooKeeper server, in zoo.cfg): a server's reads and
// what its clients may ask for go by them.
func (s Config) treeOptions() znode.Options {
	return znode.Options{ExtendedTypes: s.ExtendedTypes, EnforceQuota: s.EnforceQuota, SkipACL: s.SkipACL}
}

// FollowState is the file in the observer's dataDir holding the tree it
// followed, saved on exit.
const FollowState = "zkraft-observer.state"

// SaveFollowing writes the followed tree to path, atomically: a crash
// leaves the previous file or none.
func SaveFollowing(l *learner.Learner, path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), FollowState+".*")
	if err != nil {
		return fmt.Errorf("migrate follow: saving the tree: %w", err)
	}
	defer os.Remove(tmp.Name())
	bw := bufio.NewWriterSize(tmp, 1<<16)
	err = l.SaveState(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("migrate follow: saving the tree: %w", err)
	}
	return nil
}
