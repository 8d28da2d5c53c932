package server

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"

	"github.com/zkraft/zkraft/backend"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/internal/security/zktls"
	"github.com/zkraft/zkraft/operator"
	"github.com/zkraft/zkraft/session"
	"github.com/zkraft/zkraft/znode"
)

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

// handOffLeadership hands a leading member's leadership to a follower
// before it goes: a rolling restart, where the others would otherwise
// notice and elect (with the handshake's settle, clients see a pause of
// milliseconds).
func handOffLeadership(node *ensemble.Node, st Config, log *zap.Logger) {
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
func lockDirs(st Config) []string {
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
func clientSecurity(st Config) (sasl saslServer, tlsCfg *tls.Config, err error) {
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
func sessionConfig(st Config, sasl saslServer, env map[string]string, requests session.RequestObserver, log *zap.Logger) session.Config {
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
		LinearizableReads:      st.LinearizableReads,
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
func memberConfig(st Config, listen func(string) (net.Listener, error), dial ensemble.Dialer, m backend.Metrics, log *zap.Logger) ensemble.Config {
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
		Join:              st.Join,
		Cancel:            st.startCancel,
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
func bindPorts(st Config) (_ *serverPorts, err error) {
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
