package server

import (
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/internal/security/zktls"
	"github.com/zkraft/zkraft/session"
)

// Config is the server's effective configuration: defaults, then zoo.cfg,
// then explicitly given flags.
type Config struct {
	// startCancel, set by Run, stops a start still waiting for its
	// ensemble's leader.
	startCancel <-chan struct{}

	DataDir             string
	DataLogDir          string // dataLogDir: raft.db and raft.journal; "" = DataDir
	NoSync              bool   // forceSync=no: log appends are not synced
	ClientAddr          string
	TickTime            time.Duration
	MinSessionTimeout   time.Duration
	MaxSessionTimeout   time.Duration
	MaxClientCnxns      int
	OutstandingLimit    int  // globalOutstandingLimit; <= 0: none
	MaxCnxns            int  // maxCnxns: client connections in all, 0 = no limit
	LeaderServesNot     bool // leaderServes=no: the leader refuses clients
	JuteMaxBuffer       int
	SuperDigest         string
	ExtendedTypes       bool
	EnforceQuota        bool // enforceQuota (zookeeper.enforceQuota): hard quota limits fail writes
	SkipACL             bool // skipACL=yes (zookeeper.skipACL): no ACL checks at all
	Audit               bool // audit.enable (zookeeper.audit.enable): the audit log of writes
	FourLetterWords     []string
	ContainerInterval   time.Duration
	SnapCount           uint64
	SnapSizeLimit       int64         // snapSizeLimitInKb in bytes; <= 0: snapCount alone bounds the log
	FsyncWarning        time.Duration // fsync.warningthresholdms; 0: ZooKeeper's 1 s
	ServerID            int64
	ReconfigEnabled     bool
	FollowZooKeeper     bool // migration.followZooKeeper: serve as an Observer of ZooKeeper
	ReadOnlyMode        bool
	MetricsAddr         string        // host:port for /metrics, "" = off
	MetricsIdleTimeout  time.Duration // metricsProvider.idleTimeout: the metrics and pprof ports' idle timeout
	AdminAddr           string        // host:port of the AdminServer, "" = off
	AdminCommandURL     string        // its admin.commandURL
	AdminIdleTimeout    time.Duration // admin.idleTimeout: an idle HTTP connection is closed after it
	AdminRateLimit      time.Duration // admin.rateLimiterIntervalInMS: the least time between two snapshot commands
	AdminHTTPS          bool          // admin.forceHttps / --admin-https: the AdminServer (and console) over TLS only
	AdminNeedClientAuth bool          // admin.needClientAuth: HTTPS clients must present a trusted certificate
	ConsoleEnabled      bool          // console.enabled / --console: the web console on the AdminServer
	ConsoleWritable     bool          // console.readOnly=false / --console-writable: it may change the tree
	ConsoleAllowedHosts []string      // console.allowedHosts / --console-allowed-hosts: host names it answers for
	ConsoleHeartbeat    time.Duration // console.heartbeatTimeout: a login whose browser is silent this long ends; 0: 90 s
	InitialConfig       string        // the zoo.cfg text, for the AdminServer's initial_configuration
	SecureClientAddr    string        // secureClientPortAddress:secureClientPort, "" = no TLS port
	PortUnification     bool          // client.portUnification: the client port takes TLS clients too
	TLS                 zktls.Options // the ssl.* Config of the secure client port
	X509SuperUser       string        // X509AuthenticationProvider.superUser
	JAASConfig          string        // --jaas-config: the JAAS file with the SASL users
	JAASSection         string        // its section (zookeeper.sasl.serverconfig, "Server")
	Krb5Conf            string        // --krb5-conf: the Kerberos configuration of a quorum learner's login
	SASLSuperUser       string        // superUser (zookeeper.superUser)
	AllowSASLFailed     bool          // allowSaslFailedClients: keep a connection whose SASL failed
	// KerberosRemoveHost and KerberosRemoveRealm are
	// kerberos.removeHostFromPrincipal and kerberos.removeRealmFromPrincipal.
	KerberosRemoveHost, KerberosRemoveRealm bool
	EnforceAuth                             bool          // enforce.auth.enabled
	EnforceSchemes                          []string      // enforce.auth.schemes
	SSLQuorum                               bool          // sslQuorum: member connections over mutual TLS
	QuorumTLS                               zktls.Options // its ssl.quorum.* stores
	QuorumVerifyHost                        bool          // ssl.quorum.hostnameVerification
	QuorumSASL                              quorumSASL    // quorum.auth.*: SASL towards ZooKeeper's leader
	SyncLimit                               int
	InitLimit                               int
	Members                                 []backend.Peer // zoo.cfg server.N / --peers; empty = standalone
	Join                                    bool           // --join: a new member of a running ensemble, which adds it
	LinearizableReads                       bool           // --linearizable-reads: reads wait for the leader's commit index
	PprofAddr                               string         // --pprof-addr: Go's profiles on this address, "" = off
	LogLevel, LogFormat                     string         // --log-level, --log-format: for the command line's logger
	// ConfigPath is the zoo.cfg read, if any (Load).
	ConfigPath string
	// KeepGC leaves the collector's settings alone; by default a
	// server tunes them to its tree (internal/base/gctune), which an
	// embedding program or a test running several servers may not want.
	KeepGC bool
	idSet  bool // ServerID given explicitly (--id)
	// listeners is the process's listener guard (the file limit's
	// division, the rejection count), made once the Config are read
	// (runServer); nil in tests that build Config alone: no caps.
	listeners *listenGuard
}

func DefaultConfig() Config {
	return Config{
		DataDir:           "./zkraft-data",
		ClientAddr:        "127.0.0.1:2181",
		TickTime:          2 * time.Second,
		MaxClientCnxns:    60,
		OutstandingLimit:  session.DefaultOutstandingLimit,
		JuteMaxBuffer:     0xfffff,
		FourLetterWords:   []string{"srvr"},
		AdminCommandURL:   "/commands",
		AdminIdleTimeout:  30 * time.Second,
		QuorumVerifyHost:  true,
		JAASSection:       "Server",
		QuorumSASL:        quorumSASL{LearnerContext: "QuorumLearner", ServicePrincipal: "zkquorum/localhost"},
		ContainerInterval: time.Minute,
		SnapCount:         ensemble.DefaultSnapshotThreshold,
		SnapSizeLimit:     4 << 30, // ZooKeeper's 4194304 KB
		ServerID:          1,
		SyncLimit:         5,
		InitLimit:         10,
		LogLevel:          "info",
		LogFormat:         "console",
	}
}

// applyZooConfig overlays zoo.cfg keys, each by its entry in
// serverSettings. Unknown keys are logged once, never fatal, so an
// operator's existing file works unchanged.
func (s *Config) applyZooConfig(cfg *zooConfig, log *zap.Logger) error {
	// ZooKeeper's AdminServer is on unless admin.enableServer=false, on
	// 0.0.0.0:8080 unless admin.serverAddress / admin.serverPort say else.
	z := &zooParts{adminOn: true, adminHost: "0.0.0.0", adminPort: "8080"}
	_, dynamic := cfg.values["dynamicConfigFile"]
	for _, k := range cfg.keys {
		v := cfg.values[k]
		if dynamic && isMemberKey(k) {
			return fmt.Errorf("zoo.cfg: parameter: %s must be in a separate dynamic config file", k)
		}
		if strings.HasPrefix(k, "server.") {
			sl, err := parseMemberLine(k, v)
			if err != nil {
				return fmt.Errorf("zoo.cfg %s=%q: %w", k, v, err)
			}
			s.Members = append(s.Members, sl)
			continue
		}
		if strings.HasPrefix(k, "authProvider.") {
			continue // ip, digest, x509 and sasl are built in
		}
		known, ok := zooKeyIndex[k]
		if !ok {
			warnUnknownKey(log, k)
			continue
		}
		if known.setting.zoo == nil {
			continue
		}
		if err := known.setting.zoo(s, z, known.key, v); err != nil {
			return fmt.Errorf("zoo.cfg %s=%q: %w", k, v, err)
		}
	}
	clientPort, clientAddr := z.clientPort, z.clientAddr
	securePort, secureAddr := z.securePort, z.secureAddr
	metricsHost, metricsPort := z.metricsHost, z.metricsPort
	adminOn, adminHost, adminPort := z.adminOn, z.adminHost, z.adminPort
	if err := s.checkEnforcedAuth(); err != nil {
		return err
	}
	if securePort != "" {
		if secureAddr == "" {
			secureAddr = "0.0.0.0" // ZooKeeper's default, like clientPortAddress's
		}
		s.SecureClientAddr = net.JoinHostPort(secureAddr, securePort)
	}
	s.AdminAddr = ""
	if adminOn {
		s.AdminAddr = net.JoinHostPort(adminHost, adminPort)
	}
	if metricsPort != "" {
		if metricsHost == "" {
			metricsHost = "0.0.0.0"
		}
		s.MetricsAddr = net.JoinHostPort(metricsHost, metricsPort)
	}
	if clientPort != "" || clientAddr != "" {
		// ZooKeeper binds clientPort on every interface unless
		// clientPortAddress names one: a zoo.cfg that says only
		// clientPort=2181 serves remote clients. Only zkraft's own
		// default, without a zoo.cfg, is loopback.
		host, port, _ := net.SplitHostPort(s.ClientAddr)
		host = "0.0.0.0"
		if clientAddr != "" {
			host = clientAddr
		}
		if clientPort != "" {
			port = clientPort
		}
		s.ClientAddr = net.JoinHostPort(host, port)
	}
	return nil
}

// millisOrDuration reads "2000" as milliseconds and "2s" as a duration.
func millisOrDuration(v string) (time.Duration, error) {
	if d, err := millis(v); err == nil {
		return d, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%q is neither milliseconds nor a duration", v)
	}
	return d, nil
}

// resolveMembers settles the member list and this member's id and client
// address: --peers overrides server.N lines; the id comes from --id or
// dataDir/myid; a member line's client address applies when no explicit
// client address was configured.
func (s *Config) resolveMembers(c Flags) error {
	if c.IsSet("peers") {
		m, err := parsePeersFlag(c.String("peers"))
		if err != nil {
			return err
		}
		s.Members = m
	}
	if len(s.Members) == 0 {
		return nil
	}
	if !s.idSet {
		id, err := readMyID(s.DataDir)
		if err != nil {
			return fmt.Errorf("ensemble member without --id: %w", err)
		}
		s.ServerID = id
	}
	if err := s.checkExtendedTypesID(); err != nil {
		return err
	}
	for _, m := range s.Members {
		if m.ID == s.ServerID {
			if m.ClientAddr != "" && !c.IsSet("client-addr") {
				s.ClientAddr = m.ClientAddr
			}
			return nil
		}
	}
	return fmt.Errorf("server id %d has no server.%d line", s.ServerID, s.ServerID)
}

// checkExtendedTypesID refuses, with extended types on, a member id whose
// session ids would start with 0xff, the top byte of a TTL node's
// ephemeralOwner: ZooKeeper refuses an id above 254 then
// (EphemeralType.validateServerId), and an id whose low byte is 0xff (a
// negative one, which ZooKeeper lets through) has the same problem.
func (s *Config) checkExtendedTypesID() error {
	if s.ExtendedTypes && (s.ServerID > 254 || s.ServerID&0xff == 0xff) {
		return fmt.Errorf("server id %d: with extended types (TTL nodes) a server id must be at most 254 and not end in byte 0xff, as ZooKeeper's", s.ServerID)
	}
	return nil
}

// electionTimeout derives the ensemble's election timeout from ZooKeeper's
// settings: syncLimit ticks (10s for the usual tickTime=2000, syncLimit=5),
// at least 250ms. As in ZooKeeper, it is how long a follower waits for a
// silent leader (a partition, a stalled host) before it elects, and how
// long a leader leads without hearing from a quorum: a member that is
// merely slow (CPU starved, in a GC pause) is never deposed within it. A
// leader whose process dies closes its connections, and its followers then
// elect at once (ensemble/timeouts.go): a kill -9 costs well under a second
// to the next acknowledged write.
func (s *Config) electionTimeout() time.Duration {
	d := s.TickTime * time.Duration(s.SyncLimit)
	if d < 250*time.Millisecond {
		d = 250 * time.Millisecond
	}
	return d
}

// millis reads a number of milliseconds. One past what a time.Duration
// holds (about 292 years either way; ZooKeeper reads some of these
// settings as a long) is the longest duration of its sign, not wrapped.
func millis(v string) (time.Duration, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("not a number of milliseconds: %w", err)
	}
	const most = math.MaxInt64 / int64(time.Millisecond)
	switch {
	case n > most:
		return math.MaxInt64, nil
	case n < -most:
		return math.MinInt64, nil
	}
	return time.Duration(n) * time.Millisecond, nil
}

// parseIntAuto accepts decimal or 0x-prefixed hex, as Java's Integer.decode.
func parseIntAuto(v string) (int, error) {
	n, err := strconv.ParseInt(v, 0, 32)
	if err != nil {
		return 0, fmt.Errorf("not an integer: %w", err)
	}
	return int(n), nil
}

func splitList(v string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' }) {
		out = append(out, strings.TrimSpace(f))
	}
	return out
}

// outstandingLimit maps globalOutstandingLimit to session.Config's: a
// value of zero or below turns the throttle off.
func outstandingLimit(v int) int {
	if v <= 0 {
		return -1
	}
	return v
}
