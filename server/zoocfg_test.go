package server

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

const sampleCfg = `# The number of milliseconds of each tick
tickTime=2000
initLimit=10
syncLimit=5
dataDir=/var/lib/zookeeper
dataLogDir=/srv/zookeeper-txnlog
clientPort=2181
clientPortAddress = 127.0.0.1
maxClientCnxns=0
maxCnxns=500
globalOutstandingLimit=2000
forceSync=no
4lw.commands.whitelist=srvr, mntr,ruok
autopurge.purgeInterval=1
someFutureKey=1
metricsProvider.className=org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider
metricsProvider.httpPort=7000
server.1=10.0.0.1:2888:3888
server.2=10.0.0.2:2888:3888:participant;2182
server.3=[::1]:2888:3888:observer;127.0.0.3:2183
`

// apply parses text as a zoo.cfg and applies it over the defaults.
func apply(t *testing.T, text string) (Config, error) {
	t.Helper()
	cfg, err := parseZooConfig(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	st := DefaultConfig()
	return st, st.applyZooConfig(cfg, zap.NewNop())
}

// mustApply is apply for a zoo.cfg that must be accepted; it also returns
// the warnings logged.
func mustApply(t *testing.T, text string) (Config, *observer.ObservedLogs) {
	t.Helper()
	cfg, err := parseZooConfig(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zap.WarnLevel)
	st := DefaultConfig()
	if err := st.applyZooConfig(cfg, zap.New(core)); err != nil {
		t.Fatal(err)
	}
	return st, logs
}

func TestZooConfigKeys(t *testing.T) {
	st, logs := mustApply(t, sampleCfg)
	if st.TickTime != 2*time.Second || st.DataDir != "/var/lib/zookeeper" || st.DataLogDir != "/srv/zookeeper-txnlog" || st.ClientAddr != "127.0.0.1:2181" ||
		st.MaxClientCnxns != 0 || st.MaxCnxns != 500 || strings.Join(st.FourLetterWords, ",") != "srvr,mntr,ruok" || st.SyncLimit != 5 {
		t.Fatalf("Config %+v", st)
	}
	if len(st.Members) != 3 || st.Members[1].ClientAddr != "0.0.0.0:2182" || !st.Members[2].Observer ||
		st.Members[2].Addr != "[::1]:2888" || st.Members[2].ClientAddr != "127.0.0.3:2183" {
		t.Fatalf("members %+v", st.Members)
	}
	if logs.Len() != 1 || logs.All()[0].ContextMap()["key"] != "someFutureKey" {
		t.Fatalf("want exactly one warning, for the unknown key; got %v", logs.All())
	}
	if st.MetricsAddr != "0.0.0.0:7000" {
		t.Fatalf("metrics address %q", st.MetricsAddr)
	}
	if st.OutstandingLimit != 2000 || DefaultConfig().OutstandingLimit != 1000 {
		t.Fatalf("globalOutstandingLimit %d (default %d), want 2000 (1000)", st.OutstandingLimit, DefaultConfig().OutstandingLimit)
	}
	if !st.NoSync || DefaultConfig().NoSync {
		t.Fatal("forceSync=no must turn log syncing off, and only then")
	}
	if st, _ := mustApply(t, "forceSync=yes\n"); st.NoSync {
		t.Fatal("forceSync=yes turned syncing off")
	}
	if outstandingLimit(0) != -1 || outstandingLimit(-5) != -1 || outstandingLimit(7) != 7 {
		t.Fatal("globalOutstandingLimit <= 0 must turn the throttle off")
	}
	if st.AdminAddr != "0.0.0.0:8080" || st.AdminCommandURL != "/commands" {
		t.Fatalf("a zoo.cfg that does not mention the AdminServer has it on 0.0.0.0:8080, as ZooKeeper's; got %q %q",
			st.AdminAddr, st.AdminCommandURL)
	}
	if got := st.electionTimeout(); got != 10*time.Second {
		t.Fatalf("election timeout %v, want 10s: tickTime 2000 x syncLimit 5, as ZooKeeper's", got)
	}
}

// TestZooConfigAdminServer covers the admin.* keys: the AdminServer is
// off without a zoo.cfg, on by default with one, and placed or disabled by
// admin.serverAddress, admin.serverPort, admin.commandURL and
// admin.enableServer.
func TestZooConfigAdminServer(t *testing.T) {
	if st := DefaultConfig(); st.AdminAddr != "" {
		t.Fatalf("embedded default has the AdminServer at %q", st.AdminAddr)
	}
	for _, tc := range []struct{ cfg, addr, url string }{
		{"tickTime=2000\n", "0.0.0.0:8080", "/commands"},
		{"admin.enableServer=false\nadmin.serverPort=9000\n", "", "/commands"},
		{"admin.serverAddress=127.0.0.1\nadmin.serverPort=18080\nadmin.commandURL=/zk\n", "127.0.0.1:18080", "/zk"},
		{"admin.enableServer=true\nadmin.serverAddress=::1\n", "[::1]:8080", "/commands"},
		{"admin.idleTimeout=5000\n", "0.0.0.0:8080", "/commands"},
		{"admin.rateLimiterIntervalInMS=1000\n", "0.0.0.0:8080", "/commands"},
	} {
		st, logs := mustApply(t, tc.cfg)
		idle := 30 * time.Second
		if strings.Contains(tc.cfg, "idleTimeout") {
			idle = 5 * time.Second
		}
		if st.AdminAddr != tc.addr || st.AdminCommandURL != tc.url || st.AdminIdleTimeout != idle || logs.Len() != 0 {
			t.Fatalf("%q: admin %q %q, want %q %q; warnings %v", tc.cfg, st.AdminAddr, st.AdminCommandURL, tc.addr, tc.url, logs.All())
		}
	}
	if _, err := apply(t, "admin.enableServer=maybe\n"); err == nil {
		t.Fatal("admin.enableServer=maybe accepted")
	}
	for cfg, want := range map[string]time.Duration{"tickTime=2000\n": 0, "admin.rateLimiterIntervalInMS=1000\n": time.Second,
		"admin.rateLimiterIntervalInMS=0\n": -1} {
		if st, _ := mustApply(t, cfg); st.AdminRateLimit != want {
			t.Errorf("%q: snapshot rate limit %v, want %v", cfg, st.AdminRateLimit, want)
		}
	}
}

// TestZooConfigSnapSizeLimit: snapSizeLimitInKb (or its system-property
// spelling) bounds the log by size, 4 GB unless set, off when <= 0, as
// ZooKeeper's; a value that is not a number is refused. And
// fsync.warningthresholdms, ZooKeeper's 1 s unless set.
func TestZooConfigSnapSizeLimit(t *testing.T) {
	for cfg, want := range map[string]int64{
		"tickTime=2000\n": 4 << 30, "snapSizeLimitInKb=1024\n": 1 << 20, "zookeeper.snapSizeLimitInKb=2\n": 2048,
		"snapSizeLimitInKb=0\n": 0, "snapSizeLimitInKb=-1\n": 0, "snapSizeLimitInKb=9223372036854775807\n": math.MaxInt64,
	} {
		st, logs := mustApply(t, cfg)
		if st.SnapSizeLimit != want || logs.Len() != 0 {
			t.Errorf("%q: log size limit %d, want %d; warnings %v", cfg, st.SnapSizeLimit, want, logs.All())
		}
	}
	for cfg, want := range map[string]time.Duration{
		"tickTime=2000\n": 0, "fsync.warningthresholdms=50\n": 50 * time.Millisecond,
		"zookeeper.fsync.warningthresholdms=2000\n": 2 * time.Second, "fsync.warningthresholdms=0\n": time.Nanosecond,
	} {
		if st, logs := mustApply(t, cfg); st.FsyncWarning != want || logs.Len() != 0 {
			t.Errorf("%q: fsync warning threshold %v, want %v; warnings %v", cfg, st.FsyncWarning, want, logs.All())
		}
	}
	if _, err := apply(t, "snapSizeLimitInKb=4GB\n"); err == nil {
		t.Fatal("snapSizeLimitInKb=4GB accepted")
	}
}

func TestZooConfigErrors(t *testing.T) {
	for _, bad := range []string{"tickTime=abc\n", "novalue\n", "server.x=h:1:2\n", "server.1=h\n", "server.1=h:1:2:boss\n"} {
		cfg, err := parseZooConfig(strings.NewReader(bad))
		if err == nil {
			st := DefaultConfig()
			err = st.applyZooConfig(cfg, zap.NewNop())
		}
		if err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestPeersFlag(t *testing.T) {
	m, err := parsePeersFlag("1=127.0.0.1:7001,2=127.0.0.1:7002,3=127.0.0.1:7003:observer")
	if err != nil {
		t.Fatal(err)
	}
	p := sortPeers(m)
	if len(p) != 3 || p[2].Addr != "127.0.0.1:7003" || !p[2].Observer || p[0].Observer {
		t.Fatalf("%+v", p)
	}
}

func TestMillisOrDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{"2000": 2 * time.Second, "2s": 2 * time.Second, "150ms": 150 * time.Millisecond} {
		if got, err := millisOrDuration(in); err != nil || got != want {
			t.Errorf("%q: %v %v", in, got, err)
		}
	}
	if _, err := millisOrDuration("soon"); err == nil {
		t.Error("accepted garbage")
	}
}

// TestZooConfigTLS covers the secure client port, quorum TLS and SASL keys,
// with and without the "zookeeper." prefix of their system properties.
func TestZooConfigTLS(t *testing.T) {
	st, logs := mustApply(t, `secureClientPort=2281
ssl.keyStore.location=/etc/zk/ks.p12
zookeeper.ssl.keyStore.password=pw
ssl.trustStore.location=/etc/zk/ts.jks
ssl.trustStore.type=JKS
ssl.clientAuth=want
ssl.enabledProtocols=TLSv1.2,TLSv1.3
ssl.ciphersuites=TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
ssl.hostnameVerification=false
X509AuthenticationProvider.superUser=CN=admin
serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory
sslQuorum=true
ssl.quorum.keyStore.location=/etc/zk/q.pem
ssl.quorum.trustStore.location=/etc/zk/qt.pem
ssl.quorum.hostnameVerification=false
authProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider
superUser=admin
zookeeper.client.portUnification=true
zookeeper.allowSaslFailedClients=true
`)
	tl := st.TLS
	if st.SecureClientAddr != "0.0.0.0:2281" || tl.KeyStore != "/etc/zk/ks.p12" || tl.KeyStorePassword != "pw" ||
		tl.TrustStore != "/etc/zk/ts.jks" || tl.TrustStoreType != "JKS" || tl.ClientAuth != "want" ||
		strings.Join(tl.EnabledProtocols, "|") != "TLSv1.2|TLSv1.3" || len(tl.CipherSuites) != 1 || st.X509SuperUser != "CN=admin" {
		t.Fatalf("client TLS Config %+v %q", st, st.SecureClientAddr)
	}
	if !st.PortUnification || !st.AllowSASLFailed {
		t.Fatalf("client.portUnification %v, allowSaslFailedClients %v: want both taken", st.PortUnification, st.AllowSASLFailed)
	}
	if !st.SSLQuorum || st.QuorumTLS.KeyStore != "/etc/zk/q.pem" || st.QuorumTLS.TrustStore != "/etc/zk/qt.pem" || st.QuorumVerifyHost {
		t.Fatalf("quorum TLS Config %+v verifyHost %v", st.QuorumTLS, st.QuorumVerifyHost)
	}
	if st.SASLSuperUser != "admin" || st.JAASSection != "Server" {
		t.Fatalf("SASL Config %q %q", st.SASLSuperUser, st.JAASSection)
	}
	if logs.Len() != 0 {
		t.Fatalf("warnings: %v", logs.All())
	}
	if d := DefaultConfig(); d.SSLQuorum || !d.QuorumVerifyHost || d.SecureClientAddr != "" {
		t.Fatalf("defaults %+v", d)
	}
}

// TestZooConfigEnforceAuth: enforce.auth.* and sessionRequireClientSASLAuth,
// and the configurations ZooKeeper refuses to start with.
func TestZooConfigEnforceAuth(t *testing.T) {
	for text, want := range map[string]string{
		"enforce.auth.enabled=true\nenforce.auth.schemes=sasl, digest\n": "sasl,digest",
		"zookeeper.sessionRequireClientSASLAuth=true\n":                  "sasl",
		"enforce.auth.schemes=sasl\n":                                    "",
	} {
		st, err := apply(t, text)
		if err != nil || strings.Join(st.EnforceSchemes, ",") != want {
			t.Errorf("%q: schemes %v, err %v; want %q", text, st.EnforceSchemes, err, want)
		}
	}
	for _, text := range []string{"enforce.auth.enabled=true\n", "enforce.auth.enabled=true\nenforce.auth.schemes=kerberos\n"} {
		if _, err := apply(t, text); err == nil {
			t.Errorf("%q accepted", text)
		}
	}
}

// TestZooConfigDynamicFile reads the members from ZooKeeper 3.5+'s
// dynamic config file, as ZooKeeper writes it once reconfig is enabled,
// and refuses what ZooKeeper refuses: member lines left in zoo.cfg beside
// it, a version line inside it.
func TestZooConfigDynamicFile(t *testing.T) {
	dir := t.TempDir()
	dyn := filepath.Join(dir, "zoo.cfg.dynamic.100000000")
	if err := os.WriteFile(dyn, []byte("server.1=10.0.0.1:2888:3888:participant;0.0.0.0:2181\n"+
		"server.2=10.0.0.2:2888:3888:participant;0.0.0.0:2181\nserver.3=10.0.0.3:2888:3888:observer;0.0.0.0:2181\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, logs := mustApply(t, "tickTime=2000\ndataDir=/var/lib/zookeeper\nreconfigEnabled=true\ndynamicConfigFile="+dyn+"\n")
	if len(st.Members) != 3 || st.Members[0].Addr != "10.0.0.1:2888" || !st.Members[2].Observer || st.Members[1].ClientAddr != "0.0.0.0:2181" {
		t.Fatalf("members from the dynamic file: %+v", st.Members)
	}
	if logs.Len() != 0 {
		t.Errorf("warnings: %v", logs.All())
	}

	if _, err := apply(t, "dynamicConfigFile="+dyn+"\nserver.4=10.0.0.4:2888:3888\n"); err == nil || !strings.Contains(err.Error(), "must be in a separate dynamic config file") {
		t.Errorf("a server line beside dynamicConfigFile: %v", err)
	}
	withVersion := filepath.Join(dir, "zoo.cfg.dynamic.2")
	_ = os.WriteFile(withVersion, []byte("server.1=10.0.0.1:2888:3888\nversion=2\n"), 0o644)
	if _, err := apply(t, "dynamicConfigFile="+withVersion+"\n"); err == nil {
		t.Error("a version line in the dynamic file was accepted")
	}
	if _, err := apply(t, "dynamicConfigFile="+filepath.Join(dir, "missing")+"\n"); err == nil {
		t.Error("a missing dynamic file was accepted")
	}
}

// TestZooConfigQuorumClassKeys: the member connections' Java class
// choices (ssl.quorum.authProvider, ssl.quorum.context.supplier.class),
// which zkraft took silently before its Config table, are accepted
// without a warning, as their client-port counterparts are.
func TestZooConfigQuorumClassKeys(t *testing.T) {
	cfg := "dataDir=/tmp/x\nssl.quorum.authProvider=x509\nzookeeper.ssl.quorum.context.supplier.class=a.B\n" +
		"ssl.authProvider=x509\nssl.context.supplier.class=a.B\n"
	if _, logs := mustApply(t, cfg); logs.Len() != 0 {
		t.Errorf("warnings: %v", logs.All())
	}
}

// TestZooConfigBooleansAsJava: the keys ZooKeeper reads with Java's
// Boolean.parseBoolean take "true" in any case, as ZooKeeper does
// (audit.enable=TRUE turned the audit log on there, and silently not here).
func TestZooConfigBooleansAsJava(t *testing.T) {
	st, _ := mustApply(t, "dataDir=/tmp/x\naudit.enable=TRUE\nenforceQuota=True\nsslQuorum=TRUE\nallowSaslFailedClients=yes\n")
	if !st.Audit || !st.EnforceQuota || !st.SSLQuorum || st.AllowSASLFailed {
		t.Fatalf("audit %v enforceQuota %v sslQuorum %v allowSaslFailedClients=yes %v", st.Audit, st.EnforceQuota, st.SSLQuorum, st.AllowSASLFailed)
	}
}
