package server

import (
	"math"
	"strconv"
	"time"
)

// serverSettings is every setting of zkraft server (see setting). A new
// setting is one entry here and its field in settings.
var serverSettings = []setting{
	// Network
	{Flag: "client-addr", Keys: []string{"clientPort", "clientPortAddress"}, Value: "127.0.0.1:2181", Topic: catNetwork,
		Default: "`127.0.0.1:2181`; with a zoo.cfg, as ZooKeeper: `clientPort` on every interface (`0.0.0.0`) unless `clientPortAddress` names one",
		Help:    "client listen address",
		ptr:     func(s *Config) any { return &s.ClientAddr }, zoo: zooClientPort},
	{Flag: "secure-client-addr", Keys: []string{"secureClientPort", "secureClientPortAddress"}, Topic: catNetwork,
		Default: "off; `secureClientPort` alone listens on every interface, as ZooKeeper",
		Help:    "also serve clients over TLS here; needs --tls-keystore",
		ptr:     func(s *Config) any { return &s.SecureClientAddr }, zoo: zooClientPort},
	{Flag: "port-unification", Kind: FlagBool, Keys: []string{"client.portUnification"}, Props: []string{"client.portUnification"}, Topic: catNetwork,
		Help: "serve TLS clients on the client port too, told apart by their first byte; needs --tls-keystore",
		ptr:  func(s *Config) any { return &s.PortUnification }, zoo: zooSecurity},

	// Storage
	{Flag: "data-dir", Keys: []string{"dataDir"}, Value: "./zkraft-data", Topic: catStorage,
		Help: "where the Raft log and snapshots live (a zoo.cfg must set it, as ZooKeeper's)",
		ptr:  func(s *Config) any { return &s.DataDir }, zoo: zooString(func(s *Config) *string { return &s.DataDir })},
	{Flag: "data-log-dir", Keys: []string{"dataLogDir"}, Topic: catStorage, Default: "the data directory",
		Help: "keep the Raft log (raft.db, raft.journal) here instead, e.g. on a device of its own; snapshots stay in the data directory. A log already in the data directory stays in use there (move both files while the member is stopped); a log in both is refused",
		ptr:  func(s *Config) any { return &s.DataLogDir }, zoo: zooString(func(s *Config) *string { return &s.DataLogDir })},
	{Flag: "no-sync", Kind: FlagBool, Keys: []string{"forceSync"}, Props: []string{"forceSync"}, Topic: catStorage,
		Default: "off (`forceSync=yes`): every group commit is fsynced before it is acknowledged",
		Help:    "acknowledge writes without waiting for the log's fsync (forceSync=no): a power loss on a majority can lose them",
		ptr:     func(s *Config) any { return &s.NoSync },
		zoo:     func(s *Config, _ *zooParts, _, v string) error { s.NoSync = v == "no"; return nil }},
	{Keys: []string{"snapCount"}, Topic: catStorage, Default: "100000",
		Help: "log entries between snapshots",
		zoo: func(s *Config, _ *zooParts, _, v string) (err error) {
			s.SnapCount, err = strconv.ParseUint(v, 10, 64)
			return err
		}},
	{Keys: []string{"snapSizeLimitInKb"}, Props: []string{"snapSizeLimitInKb"}, Topic: catStorage, Default: "4194304 (4 GB)",
		Help: "a snapshot once the log since the last one passes half to all of this many KB; 0 or less: snapCount alone",
		zoo: func(s *Config, _ *zooParts, _, v string) error {
			kb, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return err
			}
			s.SnapSizeLimit = max(kb, 0) << 10 // ZooKeeper: <= 0 turns the limit off
			if kb > math.MaxInt64>>10 {
				s.SnapSizeLimit = math.MaxInt64
			}
			return nil
		}},
	{Keys: []string{"fsync.warningthresholdms"}, Props: []string{"fsync.warningthresholdms"}, Topic: catStorage, Default: "1000",
		Help: "a log sync slower than this many ms is logged in ZooKeeper's words and counted (fsync_threshold_exceed_count)",
		zoo: func(s *Config, _ *zooParts, _, v string) error {
			ms, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return err
			}
			// Longer than ms whole milliseconds; 0 or less: any sync of a
			// millisecond or more (ensemble.Config.FsyncWarning).
			s.FsyncWarning = max(time.Duration(min(ms, math.MaxInt64/int64(time.Millisecond)))*time.Millisecond, time.Nanosecond)
			return nil
		}},

	// Ensemble
	{Flag: "id", Topic: catEnsemble, Default: "the data directory's `myid` file, when there are members",
		Help: "this member's server id: a whole number, as myid holds it",
		apply: func(s *Config, c Flags) error {
			id, err := ParseMyID(c.String("id"))
			if err != nil {
				return err
			}
			s.ServerID, s.idSet = id, true
			return nil
		}},
	{Flag: "peers", Topic: catEnsemble, Default: "standalone; zoo.cfg: `server.N=host:port1:port2[:observer][;clientAddr]` lines",
		Help: "ensemble members: 1=host:port,2=host:port[:observer][;clientAddr],... (clientAddr: host:port or port, where the console asks that member)"},
	{Keys: []string{"dynamicConfigFile"}, Topic: catEnsemble, Default: "none: the members are zoo.cfg's `server.N` lines",
		Help: "the file ZooKeeper 3.5+ moves the server.N lines to; server.N lines beside it are refused",
		zoo:  func(s *Config, _ *zooParts, _, v string) error { return s.applyDynamicConfig(v) }},
	{Flag: "join", Kind: FlagBool, Topic: catEnsemble, Default: "off: a new ensemble bootstraps",
		Help: "a new member: wait to be added by reconfig instead of bootstrapping",
		ptr:  func(s *Config) any { return &s.Join }},
	{Flag: "reconfig-enabled", Kind: FlagBool, Keys: []string{"reconfigEnabled"}, Topic: catEnsemble, Default: "off (reconfig answers -123)",
		Help: "allow the reconfig operation",
		ptr:  func(s *Config) any { return &s.ReconfigEnabled }, zoo: zooParseBool(func(s *Config) *bool { return &s.ReconfigEnabled })},
	{Flag: "read-only-mode", Kind: FlagBool, Keys: []string{"readonlymode.enabled"}, Topic: catEnsemble,
		Help: "without a quorum, keep serving read-only clients",
		ptr:  func(s *Config) any { return &s.ReadOnlyMode }, zoo: zooParseBool(func(s *Config) *bool { return &s.ReadOnlyMode })},
	{Flag: "follow-zookeeper", Kind: FlagBool, Keys: []string{"migration.followZooKeeper"}, Topic: catEnsemble, Default: "off",
		Help: "live migration: the voting server.N lines are a running Apache ZooKeeper ensemble, which this server (its own line :observer) follows as an Observer while it serves clients",
		ptr:  func(s *Config) any { return &s.FollowZooKeeper }, zoo: zooParseBool(func(s *Config) *bool { return &s.FollowZooKeeper })},
	{Flag: "linearizable-reads", Kind: FlagBool, Topic: catEnsemble, Default: "off: reads are served from the member's tree, as ZooKeeper",
		Help: "confirm every read through the log first (etcd-style reads; slower)",
		ptr:  func(s *Config) any { return &s.LinearizableReads }},
	{Keys: []string{"syncLimit"}, Topic: catEnsemble, Default: "5",
		Help: "ticks a leader waits for a silent follower, and followers for a silent leader, before electing (the election timeout is tickTime × syncLimit)",
		zoo:  zooAtoi(func(s *Config) *int { return &s.SyncLimit })},
	{Keys: []string{"initLimit"}, Topic: catEnsemble, Default: "10",
		Help: "accepted; zkraft's catch-up has no time limit of its own",
		zoo:  zooAtoi(func(s *Config) *int { return &s.InitLimit })},
	{Keys: []string{"leaderServes"}, Props: []string{"leaderServes"}, Topic: catEnsemble, Default: "yes",
		Help: "with no, the leader turns clients away (they go to the followers); four-letter words stay answered",
		zoo:  func(s *Config, _ *zooParts, _, v string) error { s.LeaderServesNot = v == "no"; return nil }},

	// Sessions
	{Flag: "tick-time", Kind: FlagDuration, Keys: []string{"tickTime"}, Value: "2000", Default: "2000 ms", Topic: catSessions,
		Help: "ZooKeeper's tickTime, in ms or as a duration (2s)",
		ptr:  func(s *Config) any { return &s.TickTime }, zoo: zooMillis(func(s *Config) *time.Duration { return &s.TickTime })},
	{Flag: "min-session-timeout", Kind: FlagDuration, Keys: []string{"minSessionTimeout"}, Default: "2 ticks", Topic: catSessions,
		Help: "lower bound for session timeouts, ms or duration",
		ptr:  func(s *Config) any { return &s.MinSessionTimeout }, zoo: zooMillis(func(s *Config) *time.Duration { return &s.MinSessionTimeout })},
	{Flag: "max-session-timeout", Kind: FlagDuration, Keys: []string{"maxSessionTimeout"}, Default: "20 ticks", Topic: catSessions,
		Help: "upper bound for session timeouts, ms or duration",
		ptr:  func(s *Config) any { return &s.MaxSessionTimeout }, zoo: zooMillis(func(s *Config) *time.Duration { return &s.MaxSessionTimeout })},

	// Security
	{Flag: "super-digest", Keys: []string{"superDigest"}, Props: []string{"DigestAuthenticationProvider.superDigest"}, Topic: catSecurity,
		Default: "none", Help: "the super user as user:base64(sha1(user:password)); `zkraft digest user:password` prints it",
		ptr:   func(s *Config) any { return &s.SuperDigest },
		check: func(s *Config) error { return CheckSuperDigest(s.SuperDigest) },
		zoo: func(s *Config, _ *zooParts, _, v string) error {
			s.SuperDigest = v
			return CheckSuperDigest(v)
		}},
	{Flag: "skip-acl", Kind: FlagBool, Keys: []string{"skipACL"}, Props: []string{"skipACL"}, Topic: catSecurity,
		Help: "check no ACLs at all, for recovering a tree whose credentials are lost (skipACL=yes)",
		ptr:  func(s *Config) any { return &s.SkipACL },
		zoo:  func(s *Config, _ *zooParts, _, v string) error { s.SkipACL = v == "yes"; return nil }},
	{Flag: "jaas-config", Topic: catSecurity, Default: "off: SASL answers an empty token, as ZooKeeper without a JAAS Server section",
		Help: "a JAAS file whose Server section lists the SASL users (DigestLoginModule) or the Kerberos key tab (Krb5LoginModule), as -Djava.security.auth.login.config; when following ZooKeeper with quorum SASL, its QuorumLearner section logs in to the leader",
		ptr:  func(s *Config) any { return &s.JAASConfig }},
	{Flag: "tls-keystore", Keys: []string{"ssl.keyStore.location"}, Props: []string{"ssl.keyStore.location"}, Topic: catSecurity,
		Help: "the secure port's key and certificate chain: PKCS12 (.p12), JKS (.jks) or PEM (.pem)",
		ptr:  func(s *Config) any { return &s.TLS.KeyStore }, zoo: zooSecurity},
	{Flag: "tls-keystore-password", Keys: []string{"ssl.keyStore.password"}, Props: []string{"ssl.keyStore.password"}, Topic: catSecurity,
		Help: "the key store's password",
		ptr:  func(s *Config) any { return &s.TLS.KeyStorePassword }, zoo: zooSecurity},
	{Flag: "tls-truststore", Keys: []string{"ssl.trustStore.location"}, Props: []string{"ssl.trustStore.location"}, Topic: catSecurity,
		Default: "the system's roots", Help: "authorities client certificates must chain to",
		ptr: func(s *Config) any { return &s.TLS.TrustStore }, zoo: zooSecurity},
	{Flag: "tls-truststore-password", Keys: []string{"ssl.trustStore.password"}, Props: []string{"ssl.trustStore.password"}, Topic: catSecurity,
		Help: "the trust store's password",
		ptr:  func(s *Config) any { return &s.TLS.TrustStorePassword }, zoo: zooSecurity},
	{Flag: "tls-client-auth", Keys: []string{"ssl.clientAuth"}, Props: []string{"ssl.clientAuth"}, Topic: catSecurity, Default: "need, as ZooKeeper",
		Help: "need, want or none: whether TLS clients must present a certificate",
		ptr:  func(s *Config) any { return &s.TLS.ClientAuth }, zoo: zooSecurity},
	securityKeys("by file extension unless typed", "the stores' types: PKCS12, JKS or PEM",
		"ssl.keyStore.type", "ssl.trustStore.type"),
	securityKeys("TLS 1.2 and 1.3; Go's suites", "the TLS versions and cipher suites offered",
		"ssl.protocol", "ssl.enabledProtocols", "ssl.ciphersuites"),
	securityKeys("not checked", "accepted: client host names are not checked (certificates are verified against the trust store)",
		"ssl.hostnameVerification"),
	securityKeys("none", "the certificate subject (X.500 name) that is the super user over TLS",
		"X509AuthenticationProvider.superUser"),
	securityKeys("false: members talk plain TCP", "mutual TLS on every member connection, and to ZooKeeper's leader when following one, with the ssl.quorum.* stores",
		"sslQuorum"),
	securityKeys("as for clients; host names checked", "the member connections' stores and checks (sslQuorum=true), and the HTTPS AdminServer's",
		"ssl.quorum.keyStore.location", "ssl.quorum.keyStore.password", "ssl.quorum.keyStore.type",
		"ssl.quorum.trustStore.location", "ssl.quorum.trustStore.password", "ssl.quorum.trustStore.type",
		"ssl.quorum.clientAuth", "ssl.quorum.protocol", "ssl.quorum.enabledProtocols", "ssl.quorum.ciphersuites",
		"ssl.quorum.hostnameVerification"),
	{Keys: []string{"quorum.auth.enableSasl", "quorum.auth.learnerRequireSasl"}, Topic: catSecurity, Default: "false",
		Help: "when following ZooKeeper (migration.followZooKeeper): both true, authenticate to its leader with quorum SASL as the JAAS file's (--jaas-config) QuorumLearner section says: DIGEST-MD5 (DigestLoginModule) or Kerberos GSSAPI (Krb5LoginModule)",
		zoo:  zooSecurity},
	{Keys: []string{"quorum.auth.learner.saslLoginContext"}, Topic: catSecurity, Default: "`QuorumLearner`",
		Help: "the JAAS section with the login given to ZooKeeper's leader: a DigestLoginModule username and password, or a Krb5LoginModule key table and principal",
		zoo:  zooSecurity},
	{Keys: []string{"quorum.auth.kerberos.servicePrincipal"}, Topic: catSecurity, Default: "`zkquorum/localhost`",
		Help: "with a Krb5LoginModule QuorumLearner, the Kerberos service principal of ZooKeeper's servers; `_HOST` in `zkquorum/_HOST` becomes the leader's host as its server.N line names it",
		zoo:  zooSecurity},
	{Flag: "krb5-conf", Topic: catSecurity, Default: "`" + DefaultKrb5Conf + "`",
		Help: "the Kerberos configuration (realms, KDCs) for a Krb5LoginModule QuorumLearner when following ZooKeeper, as -Djava.security.krb5.conf",
		ptr:  func(s *Config) any { return &s.Krb5Conf }},
	securityKeys("none", "the SASL identity that is the super user", "superUser"),
	securityKeys("Server", "the JAAS file's section with the server's login", "sasl.serverconfig"),
	securityKeys("false", "shorten Kerberos principals to user@REALM, or to user@host, for sasl identities",
		"kerberos.removeHostFromPrincipal", "kerberos.removeRealmFromPrincipal"),
	securityKeys("false: a failed SASL exchange ends in AuthFailed", "keep a session whose SASL exchange failed, unauthenticated",
		"allowSaslFailedClients"),
	securityKeys("off", "close sessions that send a request before authenticating with one of the schemes (-124); sessionRequireClientSASLAuth=true is enforce.auth for sasl",
		"enforce.auth.enabled", "enforce.auth.schemes", "sessionRequireClientSASLAuth"),

	// Limits
	{Flag: "max-client-cnxns", Kind: FlagInt, Keys: []string{"maxClientCnxns"}, Value: "60", Topic: catLimits,
		Help: "connections per client IP (0 = unlimited)",
		ptr:  func(s *Config) any { return &s.MaxClientCnxns }, zoo: zooAtoi(func(s *Config) *int { return &s.MaxClientCnxns })},
	{Keys: []string{"maxCnxns"}, Props: []string{"maxCnxns"}, Topic: catLimits, Default: "no limit",
		Help: "client connections in all (0 or less: no limit)",
		zoo: func(s *Config, _ *zooParts, _, v string) (err error) {
			if s.MaxCnxns, err = strconv.Atoi(v); s.MaxCnxns < 0 {
				s.MaxCnxns = 0 // ZooKeeper: negative means the default, no limit
			}
			return err
		}},
	{Flag: "global-outstanding-limit", Kind: FlagInt, Keys: []string{"globalOutstandingLimit"}, Props: []string{"globalOutstandingLimit"},
		Value: "1000", Topic: catLimits,
		Help: "writes in flight on this member beyond which clients with writes in flight are not read until it drains (0 = none)",
		ptr:  func(s *Config) any { return &s.OutstandingLimit }, zoo: zooAtoi(func(s *Config) *int { return &s.OutstandingLimit })},
	{Flag: "jute-max-buffer", Kind: FlagInt, Keys: []string{"jute.maxbuffer"}, Value: "1048575", Topic: catLimits,
		Help: "largest request frame in bytes",
		ptr:  func(s *Config) any { return &s.JuteMaxBuffer },
		zoo: func(s *Config, _ *zooParts, _, v string) (err error) {
			s.JuteMaxBuffer, err = parseIntAuto(v)
			return err
		}},
	{Flag: "enforce-quota", Kind: FlagBool, Keys: []string{"enforceQuota"}, Props: []string{"enforceQuota"}, Topic: catLimits,
		Default: "off: quota limits are only noted",
		Help:    "fail creates and setData beyond a quota's hard limits with QuotaExceeded",
		ptr:     func(s *Config) any { return &s.EnforceQuota },
		zoo:     func(s *Config, _ *zooParts, _, v string) error { s.EnforceQuota = javaTrue(v); return nil }},

	// Znodes
	{Flag: "extended-types", Kind: FlagBool, Keys: []string{"extendedTypesEnabled"}, Props: []string{"extendedTypesEnabled"}, Topic: catZnodes,
		Default: "off (TTL nodes answer -6)", Help: "enable TTL nodes",
		ptr: func(s *Config) any { return &s.ExtendedTypes }, zoo: zooParseBool(func(s *Config) *bool { return &s.ExtendedTypes })},
	{Flag: "container-check-interval", Kind: FlagDuration, Keys: []string{"znode.container.checkIntervalMs"}, Value: "60000", Default: "1 minute",
		Topic: catZnodes, Help: "how often empty containers and expired TTL nodes are reaped, ms or duration",
		ptr: func(s *Config) any { return &s.ContainerInterval }, zoo: zooMillis(func(s *Config) *time.Duration { return &s.ContainerInterval })},

	// Observability
	{Flag: "4lw-whitelist", Keys: []string{"4lw.commands.whitelist"}, Value: "srvr", Topic: catObservability,
		Help: "four-letter words to answer, comma separated, * = all; an unknown word is refused",
		apply: func(s *Config, c Flags) error {
			s.FourLetterWords = splitList(c.String("4lw-whitelist"))
			return checkFourLetterWords(s.FourLetterWords)
		},
		zoo: func(s *Config, _ *zooParts, _, v string) error {
			s.FourLetterWords = splitList(v)
			return checkFourLetterWords(s.FourLetterWords)
		}},
	{Flag: "audit", Kind: FlagBool, Keys: []string{"audit.enable"}, Props: []string{"audit.enable"}, Topic: catObservability,
		Help: "log every client write's outcome in ZooKeeper's audit format to the logger \"audit\"",
		ptr:  func(s *Config) any { return &s.Audit },
		zoo:  func(s *Config, _ *zooParts, _, v string) error { s.Audit = javaTrue(v); return nil }},
	{Flag: "metrics-addr", Keys: []string{"metricsProvider.httpHost", "metricsProvider.httpPort"}, Topic: catObservability,
		Default: "off; `metricsProvider.httpPort` alone listens on every interface",
		Help:    "serve Prometheus /metrics here",
		ptr:     func(s *Config) any { return &s.MetricsAddr }, zoo: zooClientPort},
	{Keys: []string{"metricsProvider.idleTimeout"}, Topic: catObservability, Default: "30000",
		Help: "ms after which a connection to the metrics (or pprof) port on which nothing moves is closed: waiting for a request, its body or a reader (headers get at most 10 s)",
		zoo:  zooMillis(func(s *Config) *time.Duration { return &s.MetricsIdleTimeout })},
	{Flag: "admin-addr", Keys: []string{"admin.enableServer", "admin.serverAddress", "admin.serverPort"}, Topic: catObservability,
		Default: "with a zoo.cfg: on at `0.0.0.0:8080`, as ZooKeeper; without one: off",
		Help:    "serve ZooKeeper's AdminServer (/commands/<name>, JSON) here; \"\" = off",
		ptr:     func(s *Config) any { return &s.AdminAddr }, zoo: zooClientPort},
	{Keys: []string{"admin.commandURL"}, Topic: catObservability, Default: "/commands",
		Help: "the AdminServer's path for commands",
		zoo:  zooString(func(s *Config) *string { return &s.AdminCommandURL })},
	{Keys: []string{"admin.idleTimeout"}, Topic: catObservability, Default: "30000",
		Help: "ms after which an AdminServer connection on which nothing moves is closed: waiting for a request, its body or a reader (headers get at most 10 s)",
		zoo:  zooMillis(func(s *Config) *time.Duration { return &s.AdminIdleTimeout })},
	{Keys: []string{"admin.rateLimiterIntervalInMS"}, Topic: catObservability, Default: "300000 (5 minutes)",
		Help: "the least time between two AdminServer snapshot commands (0 = no limit)",
		zoo: func(s *Config, _ *zooParts, _, v string) (err error) {
			if s.AdminRateLimit, err = millis(v); err == nil && s.AdminRateLimit == 0 {
				s.AdminRateLimit = -1 // 0: no limit (unset means 5 minutes)
			}
			return err
		}},
	{Flag: "admin-https", Kind: FlagBool, Keys: []string{"admin.forceHttps"}, Topic: catObservability,
		Help: "serve the AdminServer (and the console) over HTTPS only, with the ssl.quorum.* key store, else --tls-keystore's",
		ptr:  func(s *Config) any { return &s.AdminHTTPS }, zoo: zooAdminHTTPS},
	{Keys: []string{"admin.needClientAuth"}, Topic: catObservability, Default: "false",
		Help: "HTTPS AdminServer clients must present a trusted certificate",
		zoo:  zooAdminHTTPS},
	{Flag: "console", Kind: FlagBool, Keys: []string{"console.enabled"}, Props: []string{"console.enabled"}, Topic: catObservability,
		Default: "off", Help: "serve the web console under /console/ on the AdminServer",
		ptr: func(s *Config) any { return &s.ConsoleEnabled }, zoo: zooConsole},
	{Flag: "console-writable", Kind: FlagBool, Keys: []string{"console.readOnly"}, Props: []string{"console.readOnly"}, Topic: catObservability,
		Default: "read-only (console.readOnly=true)", Help: "let the console create, change and delete znodes (zoo.cfg console.readOnly=false)",
		ptr: func(s *Config) any { return &s.ConsoleWritable }, zoo: zooConsole},
	{Flag: "console-allowed-hosts", Keys: []string{"console.allowedHosts"}, Props: []string{"console.allowedHosts"}, Topic: catObservability,
		Default: "IP addresses, localhost and this machine's host name",
		Help:    "other host names (comma separated) the AdminServer and its console answer for, on every path; a request under any other name is refused with 421, against DNS rebinding",
		apply: func(s *Config, c Flags) error {
			s.ConsoleAllowedHosts = splitList(c.String("console-allowed-hosts"))
			return nil
		},
		zoo: func(s *Config, _ *zooParts, _, v string) error { s.ConsoleAllowedHosts = splitList(v); return nil }},
	{Flag: "console-heartbeat-timeout", Kind: FlagDuration, Keys: []string{"console.heartbeatTimeout"}, Props: []string{"console.heartbeatTimeout"},
		Topic: catObservability, Default: "90 s",
		Help: "a console login whose browser is silent this long (no request, no open live view, no heartbeat: an open page, hidden or not, sends one every third of it) ends with its ZooKeeper sessions; ms or a duration, at least 3 s",
		ptr:  func(s *Config) any { return &s.ConsoleHeartbeat }, zoo: zooConsole},
	{Flag: "pprof-addr", Topic: catObservability, Default: "off", Help: "serve Go profiles (/debug/pprof) on this address",
		ptr: func(s *Config) any { return &s.PprofAddr }},
	{Flag: "log-level", Value: "info", Topic: catObservability, Help: "debug, info, warn or error",
		ptr: func(s *Config) any { return &s.LogLevel }},
	{Flag: "log-format", Value: "console", Topic: catObservability, Help: "console or json",
		ptr: func(s *Config) any { return &s.LogFormat }},

	// Keys ZooKeeper knows that mean nothing here.
	{Keys: []string{"autopurge.snapRetainCount", "autopurge.purgeInterval"}, Topic: catIgnored,
		Help: "zkraft compacts its own log and keeps two snapshots"},
	{Keys: []string{"standaloneEnabled", "preAllocSize"}, Topic: catIgnored, Help: "no meaning for zkraft"},
	{Keys: []string{"peerType"}, Topic: catIgnored, Help: "the `:observer` suffix of a server.N line says it"},
	{Keys: []string{"portUnification"}, Topic: catIgnored,
		Help: "ZooKeeper's quorum port taking TLS and plain connections alike while an ensemble moves to sslQuorum: an observer following it connects as its own sslQuorum says; zkraft's members speak one or the other"},
	{Keys: []string{"quorum.auth.serverRequireSasl", "quorum.auth.server.saslLoginContext",
		"quorum.cnxn.threads.size"}, Topic: catIgnored,
		Help: "the server side of ZooKeeper's quorum SASL: zkraft serves no ZooKeeper learners (its members use sslQuorum)"},
	{Keys: []string{"metricsProvider.className", "metricsProvider.exportJvmInfo"}, Topic: catIgnored,
		Help: "the metrics provider is built in (there is no JVM)"},
	{Keys: []string{"ssl.authProvider", "ssl.quorum.authProvider", "serverCnxnFactory", "clientCnxnSocket",
		"ssl.context.supplier.class", "ssl.quorum.context.supplier.class"},
		Props: []string{"ssl.authProvider", "ssl.quorum.authProvider", "serverCnxnFactory", "clientCnxnSocket",
			"ssl.context.supplier.class", "ssl.quorum.context.supplier.class"},
		Topic: catIgnored, Help: "Java class choices; `authProvider.N` too: ip, digest, x509 and sasl are built in"},
}

// securityKeys is a zoo.cfg-only group of ZooKeeper's security keys,
// applied by applySecurityKey, in zoo.cfg with or without "zookeeper.".
func securityKeys(def, help string, keys ...string) setting {
	return setting{Keys: keys, Props: keys, Topic: catSecurity, Default: def, Help: help, zoo: zooSecurity}
}

func zooSecurity(s *Config, _ *zooParts, key, v string) error {
	s.applySecurityKey(key, v)
	return nil
}

func zooAdminHTTPS(s *Config, _ *zooParts, key, v string) error {
	_, err := s.adminHTTPSKey(key, v)
	return err
}

func zooConsole(s *Config, _ *zooParts, key, v string) error {
	_, err := s.consoleKey(key, v)
	return err
}

// zooClientPort collects the keys that make a listen address together.
func zooClientPort(_ *Config, z *zooParts, key, v string) (err error) {
	switch key {
	case "clientPort":
		z.clientPort = v
	case "clientPortAddress":
		z.clientAddr = v
	case "secureClientPort":
		z.securePort = v
	case "secureClientPortAddress":
		z.secureAddr = v
	case "metricsProvider.httpHost":
		z.metricsHost = v
	case "metricsProvider.httpPort":
		z.metricsPort = v
	case "admin.enableServer":
		z.adminOn, err = strconv.ParseBool(v)
	case "admin.serverAddress":
		z.adminHost = v
	case "admin.serverPort":
		z.adminPort = v
	}
	return err
}

func zooString(f func(*Config) *string) func(*Config, *zooParts, string, string) error {
	return func(s *Config, _ *zooParts, _, v string) error { *f(s) = v; return nil }
}

func zooParseBool(f func(*Config) *bool) func(*Config, *zooParts, string, string) error {
	return func(s *Config, _ *zooParts, _, v string) (err error) {
		*f(s), err = strconv.ParseBool(v)
		return err
	}
}

func zooAtoi(f func(*Config) *int) func(*Config, *zooParts, string, string) error {
	return func(s *Config, _ *zooParts, _, v string) (err error) {
		*f(s), err = strconv.Atoi(v)
		return err
	}
}

func zooMillis(f func(*Config) *time.Duration) func(*Config, *zooParts, string, string) error {
	return func(s *Config, _ *zooParts, _, v string) (err error) {
		*f(s), err = millis(v)
		return err
	}
}
