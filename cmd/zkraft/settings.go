package main

import (
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"go.uber.org/zap"

	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/internal/zktls"
	"github.com/zkraft/zkraft/session"
)

// settings is the server's effective configuration: defaults, then zoo.cfg,
// then explicitly given flags.
type settings struct {
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
	ServerID            uint8
	ReconfigEnabled     bool
	ReadOnlyMode        bool
	MetricsAddr         string        // host:port for /metrics, "" = off
	AdminAddr           string        // host:port of the AdminServer, "" = off
	AdminCommandURL     string        // its admin.commandURL
	AdminIdleTimeout    time.Duration // admin.idleTimeout: an idle HTTP connection is closed after it
	AdminRateLimit      time.Duration // admin.rateLimiterIntervalInMS: the least time between two snapshot commands
	AdminHTTPS          bool          // admin.forceHttps / --admin-https: the AdminServer (and console) over TLS only
	AdminNeedClientAuth bool          // admin.needClientAuth: HTTPS clients must present a trusted certificate
	ConsoleEnabled      bool          // console.enabled / --console: the web console on the AdminServer
	ConsoleWritable     bool          // console.readOnly=false / --console-writable: it may change the tree
	InitialConfig       string        // the zoo.cfg text, for the AdminServer's initial_configuration
	SecureClientAddr    string        // secureClientPortAddress:secureClientPort, "" = no TLS port
	PortUnification     bool          // client.portUnification: the client port takes TLS clients too
	TLS                 zktls.Options // the ssl.* settings of the secure client port
	X509SuperUser       string        // X509AuthenticationProvider.superUser
	JAASConfig          string        // --jaas-config: the JAAS file with the SASL users
	JAASSection         string        // its section (zookeeper.sasl.serverconfig, "Server")
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
	SyncLimit                               int
	InitLimit                               int
	Members                                 []ensemble.Peer // zoo.cfg server.N / --peers; empty = standalone
	idSet                                   bool            // ServerID given explicitly (--id)
}

func defaultSettings() settings {
	return settings{
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
		ContainerInterval: time.Minute,
		SnapCount:         100000,
		SnapSizeLimit:     4 << 30, // ZooKeeper's 4194304 KB
		ServerID:          1,
		SyncLimit:         5,
		InitLimit:         10,
	}
}

// knownIgnored are zoo.cfg keys that are valid for ZooKeeper but have no
// meaning here (JVM, purging of ZooKeeper's own files...).
var knownIgnored = map[string]bool{
	"autopurge.snapRetainCount": true, "autopurge.purgeInterval": true,
	"standaloneEnabled": true, "preAllocSize": true, "peerType": true, // the :observer suffix of server.N says it
	"metricsProvider.className": true, "metricsProvider.exportJvmInfo": true,
}

// applyZooConfig overlays zoo.cfg keys. Unknown keys are logged once, never
// fatal, so an operator's existing file works unchanged.
func (s *settings) applyZooConfig(cfg *zooConfig, log *zap.Logger) error {
	var clientPort, clientAddr, metricsHost, metricsPort, securePort, secureAddr string
	// ZooKeeper's AdminServer is on unless admin.enableServer=false, on
	// 0.0.0.0:8080 unless admin.serverAddress / admin.serverPort say else.
	adminOn, adminHost, adminPort := true, "0.0.0.0", "8080"
	for _, k := range cfg.keys {
		v := cfg.values[k]
		var err error
		if s.applySecurityKey(strings.TrimPrefix(k, "zookeeper."), v) {
			continue
		}
		if ok, err := s.adminHTTPSKey(k, v); ok {
			if err != nil {
				return fmt.Errorf("zoo.cfg %s=%q: %w", k, v, err)
			}
			continue
		}
		if ok, err := s.consoleKey(k, v); ok {
			if err != nil {
				return fmt.Errorf("zoo.cfg %s=%q: %w", k, v, err)
			}
			continue
		}
		switch k {
		case "secureClientPort":
			securePort = v
		case "secureClientPortAddress":
			secureAddr = v
		case "dataDir":
			s.DataDir = v
		case "dataLogDir":
			s.DataLogDir = v
		case "forceSync", "zookeeper.forceSync":
			s.NoSync = v == "no" // as ZooKeeper: only "no" turns syncing off
		case "clientPort":
			clientPort = v
		case "clientPortAddress":
			clientAddr = v
		case "tickTime":
			s.TickTime, err = millis(v)
		case "minSessionTimeout":
			s.MinSessionTimeout, err = millis(v)
		case "maxSessionTimeout":
			s.MaxSessionTimeout, err = millis(v)
		case "maxClientCnxns":
			s.MaxClientCnxns, err = strconv.Atoi(v)
		case "globalOutstandingLimit", "zookeeper.globalOutstandingLimit":
			s.OutstandingLimit, err = strconv.Atoi(v)
		case "leaderServes", "zookeeper.leaderServes":
			s.LeaderServesNot = v == "no"
		case "maxCnxns", "zookeeper.maxCnxns":
			if s.MaxCnxns, err = strconv.Atoi(v); s.MaxCnxns < 0 {
				s.MaxCnxns = 0 // ZooKeeper: negative means the default, no limit
			}
		case "jute.maxbuffer":
			s.JuteMaxBuffer, err = parseIntAuto(v)
		case "4lw.commands.whitelist":
			s.FourLetterWords = splitList(v)
			err = checkFourLetterWords(s.FourLetterWords)
		case "audit.enable", "zookeeper.audit.enable":
			s.Audit = v == "true"
		case "skipACL", "zookeeper.skipACL":
			s.SkipACL = v == "yes"
		case "enforceQuota", "zookeeper.enforceQuota":
			s.EnforceQuota = v == "true"
		case "extendedTypesEnabled", "zookeeper.extendedTypesEnabled":
			s.ExtendedTypes, err = strconv.ParseBool(v)
		case "superDigest", "zookeeper.DigestAuthenticationProvider.superDigest":
			s.SuperDigest = v
			err = checkSuperDigest(v)
		case "znode.container.checkIntervalMs":
			s.ContainerInterval, err = millis(v)
		case "snapCount":
			s.SnapCount, err = strconv.ParseUint(v, 10, 64)
		case "fsync.warningthresholdms", "zookeeper.fsync.warningthresholdms":
			var ms int64
			if ms, err = strconv.ParseInt(v, 10, 64); err == nil {
				// Longer than ms whole milliseconds; 0 or less: any sync
				// of a millisecond or more (ensemble.Config.FsyncWarning).
				s.FsyncWarning = max(time.Duration(min(ms, math.MaxInt64/int64(time.Millisecond)))*time.Millisecond, time.Nanosecond)
			}
		case "snapSizeLimitInKb", "zookeeper.snapSizeLimitInKb":
			var kb int64
			if kb, err = strconv.ParseInt(v, 10, 64); err == nil {
				s.SnapSizeLimit = max(kb, 0) << 10 // ZooKeeper: <= 0 turns the limit off
				if kb > math.MaxInt64>>10 {
					s.SnapSizeLimit = math.MaxInt64
				}
			}
		case "metricsProvider.httpPort":
			metricsPort = v
		case "metricsProvider.httpHost":
			metricsHost = v
		case "admin.enableServer":
			adminOn, err = strconv.ParseBool(v)
		case "admin.serverAddress":
			adminHost = v
		case "admin.serverPort":
			adminPort = v
		case "admin.commandURL":
			s.AdminCommandURL = v
		case "admin.rateLimiterIntervalInMS":
			if s.AdminRateLimit, err = millis(v); err == nil && s.AdminRateLimit == 0 {
				s.AdminRateLimit = -1 // 0: no limit (unset means 5 minutes)
			}
		case "admin.idleTimeout":
			s.AdminIdleTimeout, err = millis(v)
		case "readonlymode.enabled":
			s.ReadOnlyMode, err = strconv.ParseBool(v)
		case "reconfigEnabled":
			s.ReconfigEnabled, err = strconv.ParseBool(v)
		case "syncLimit":
			s.SyncLimit, err = strconv.Atoi(v)
		case "initLimit":
			s.InitLimit, err = strconv.Atoi(v)
		case "dynamicConfigFile":
			err = s.applyDynamicConfig(v)
		default:
			if _, dyn := cfg.values["dynamicConfigFile"]; dyn && isMemberKey(k) {
				return fmt.Errorf("zoo.cfg: parameter: %s must be in a separate dynamic config file", k)
			}
			if strings.HasPrefix(k, "server.") {
				var sl ensemble.Peer
				if sl, err = parseMemberLine(k, v); err == nil {
					s.Members = append(s.Members, sl)
				}
				break
			}
			if strings.HasPrefix(k, "authProvider.") {
				break // ip, digest, x509 and sasl are built in
			}
			if !knownIgnored[k] {
				warnUnknownKey(log, k)
			}
		}
		if err != nil {
			return fmt.Errorf("zoo.cfg %s=%q: %w", k, v, err)
		}
	}
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

// applyFlags overlays flags the user set explicitly. Time flags take
// milliseconds, as zoo.cfg does, or a Go duration ("2s").
func (s *settings) applyFlags(c *cli.Context) error {
	for _, f := range []struct {
		name string
		dst  *time.Duration
	}{
		{"tick-time", &s.TickTime}, {"min-session-timeout", &s.MinSessionTimeout},
		{"max-session-timeout", &s.MaxSessionTimeout}, {"container-check-interval", &s.ContainerInterval},
	} {
		if !c.IsSet(f.name) {
			continue
		}
		d, err := millisOrDuration(c.String(f.name))
		if err != nil {
			return fmt.Errorf("--%s: %w", f.name, err)
		}
		*f.dst = d
	}
	for flag, dst := range map[string]*string{
		"data-dir": &s.DataDir, "data-log-dir": &s.DataLogDir, "client-addr": &s.ClientAddr, "super-digest": &s.SuperDigest,
		"metrics-addr": &s.MetricsAddr, "admin-addr": &s.AdminAddr, "jaas-config": &s.JAASConfig,
		"secure-client-addr": &s.SecureClientAddr, "tls-keystore": &s.TLS.KeyStore,
		"tls-keystore-password": &s.TLS.KeyStorePassword, "tls-truststore": &s.TLS.TrustStore,
		"tls-truststore-password": &s.TLS.TrustStorePassword, "tls-client-auth": &s.TLS.ClientAuth,
	} {
		if c.IsSet(flag) {
			*dst = c.String(flag)
		}
	}
	for flag, dst := range map[string]*bool{
		"extended-types": &s.ExtendedTypes, "no-sync": &s.NoSync, "audit": &s.Audit, "skip-acl": &s.SkipACL,
		"enforce-quota": &s.EnforceQuota, "read-only-mode": &s.ReadOnlyMode,
		"port-unification": &s.PortUnification, "reconfig-enabled": &s.ReconfigEnabled,
		"console": &s.ConsoleEnabled, "console-writable": &s.ConsoleWritable, "admin-https": &s.AdminHTTPS,
	} {
		if c.IsSet(flag) {
			*dst = c.Bool(flag)
		}
	}
	for flag, dst := range map[string]*int{
		"max-client-cnxns": &s.MaxClientCnxns, "jute-max-buffer": &s.JuteMaxBuffer,
		"global-outstanding-limit": &s.OutstandingLimit,
	} {
		if c.IsSet(flag) {
			*dst = c.Int(flag)
		}
	}
	if c.IsSet("4lw-whitelist") {
		s.FourLetterWords = splitList(c.String("4lw-whitelist"))
		if err := checkFourLetterWords(s.FourLetterWords); err != nil {
			return fmt.Errorf("--4lw-whitelist: %w", err)
		}
	}
	if c.IsSet("super-digest") {
		if err := checkSuperDigest(s.SuperDigest); err != nil {
			return fmt.Errorf("--super-digest: %w", err)
		}
	}
	if c.IsSet("id") {
		s.ServerID = uint8(c.Uint("id"))
		s.idSet = true
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
func (s *settings) resolveMembers(c *cli.Context) error {
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

// electionTimeout derives the ensemble's election timeout from ZooKeeper's
// settings: syncLimit ticks (10s for the usual tickTime=2000, syncLimit=5),
// at least 250ms. As in ZooKeeper, it is how long a follower waits for a
// silent leader (a partition, a stalled host) before it elects, and how
// long a leader leads without hearing from a quorum: a member that is
// merely slow (CPU starved, in a GC pause) is never deposed within it. A
// leader whose process dies closes its connections, and its followers then
// elect at once (ensemble/timeouts.go): a kill -9 costs well under a second
// to the next acknowledged write.
func (s *settings) electionTimeout() time.Duration {
	d := s.TickTime * time.Duration(s.SyncLimit)
	if d < 250*time.Millisecond {
		d = 250 * time.Millisecond
	}
	return d
}

func millis(v string) (time.Duration, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("not a number of milliseconds: %w", err)
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
