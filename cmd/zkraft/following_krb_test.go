package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/jcmturner/gokrb5/v8/keytab"

	"github.com/zkraft/zkraft/internal/testing/krbtest"
	"github.com/zkraft/zkraft/internal/testing/zktest"
)

// TestFollowZooKeeperQuorumKerberos: a zkraft server follows a ZooKeeper
// 3.8 ensemble whose quorum requires SASL GSSAPI (a real MIT KDC; the
// JAAS file's QuorumLearner section logs in with Krb5LoginModule, given
// as --jaas-config, the KDC's krb5.conf as --krb5-conf, and
// quorum.auth.kerberos.servicePrincipal=zkquorum/_HOST in zoo.cfg): a
// client of the observer writes through it and reads ZooKeeper's writes.
func TestFollowZooKeeperQuorumKerberos(t *testing.T) {
	kdc := krbtest.Start(t)
	e, q := zktest.StartQuorumKerberos(t, kdc)
	zc := connectTo(t, e.ClientAddrs()...)
	if _, err := zc.Create("/before", []byte("zk"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	lines := append(append([]string{}, zktest.QuorumSASLLines...), "quorum.auth.kerberos.servicePrincipal="+zktest.QuorumKerberosServicePrincipal)
	obs := startFollowerWith(t, e, e.ObserverID, []string{"--jaas-config", q.JAAS, "--krb5-conf", kdc.Conf}, lines...)
	readWriteThrough(t, zc, connectTo(t, obs.clientAddr))
}

// TestQuorumLearnerLoginKerberos: a QuorumLearner section with
// Krb5LoginModule is a Kerberos login from its key table as its
// principal, with the --krb5-conf configuration and
// quorum.auth.kerberos.servicePrincipal (default zkquorum/localhost); no
// key table, a principal without realm, an unreadable key table or
// krb5.conf, and a section with both login modules are refused.
func TestQuorumLearnerLoginKerberos(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	kt := keytab.New()
	if err := kt.AddEntry("zkquorum/zk4.example.com", "EXAMPLE.COM", "pw", time.Now(), 1, 18 /* aes256-cts-hmac-sha1-96 */); err != nil {
		t.Fatal(err)
	}
	ktBytes, err := kt.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	ktPath := write("learner.keytab", string(ktBytes))
	krb5 := write("krb5.conf", "[libdefaults]\n default_realm = EXAMPLE.COM\n[realms]\n EXAMPLE.COM = {\n  kdc = kdc.example.com:88\n }\n")
	section := func(opts string) string {
		return write(strings.NewReplacer("=", "", " ", "", "\"", "", "/", "").Replace(opts)+".jaas",
			"QuorumLearner { com.sun.security.auth.module.Krb5LoginModule required "+opts+"; };")
	}
	good := section(`useKeyTab=true keyTab="` + ktPath + `" storeKey=true principal="zkquorum/zk4.example.com@EXAMPLE.COM"`)
	both := "quorum.auth.enableSasl=true\nquorum.auth.learnerRequireSasl=true\n"
	login := func(cfg, jaas, conf string) (learnerLogin, error) {
		st, _ := mustApply(t, "dataDir=/tmp/x\n"+both+cfg)
		st.JAASConfig, st.Krb5Conf = jaas, conf
		return quorumLearnerLogin(st)
	}
	l, err := login("quorum.auth.kerberos.servicePrincipal=zkquorum/_HOST\n", good, krb5)
	if err != nil || l.digest != nil || l.kerberos == nil {
		t.Fatalf("Krb5LoginModule: %+v, %v", l, err)
	}
	k := l.kerberos
	if k.Principal != "zkquorum/zk4.example.com@EXAMPLE.COM" || k.ServicePrincipal != "zkquorum/_HOST" ||
		k.Krb5Conf.LibDefaults.DefaultRealm != "EXAMPLE.COM" || len(k.Keytab.Entries) != 1 {
		t.Errorf("login %+v", k)
	}
	if l, err := login("", good, krb5); err != nil || l.kerberos.ServicePrincipal != "zkquorum/localhost" {
		t.Errorf("default service principal: %+v, %v", l.kerberos, err)
	}
	for name, c := range map[string]struct{ jaas, conf, want string }{
		"no key table":      {section(`useKeyTab=false principal="zkquorum/h@EXAMPLE.COM"`), krb5, "useKeyTab=true"},
		"no realm":          {section(`useKeyTab=true keyTab="` + ktPath + `" principal="zkquorum/h"`), krb5, "want zkquorum/host@REALM"},
		"missing key table": {section(`useKeyTab=true keyTab="/nonexistent.keytab" principal="zkquorum/h@EXAMPLE.COM"`), krb5, "/nonexistent.keytab"},
		"missing krb5.conf": {good, filepath.Join(dir, "nope.conf"), "--krb5-conf"},
		"both modules": {write("both.jaas", `QuorumLearner { com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab="`+ktPath+
			`" principal="zkquorum/h@EXAMPLE.COM"; org.apache.zookeeper.server.auth.DigestLoginModule required username="u" password="p"; };`), krb5, "keep one"},
	} {
		if _, err := login("", c.jaas, c.conf); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}
