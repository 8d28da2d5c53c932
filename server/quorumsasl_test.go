package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jcmturner/gokrb5/v8/keytab"
)

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

func TestQuorumLearnerLogin(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	digest := write("digest.jaas", `QuorumLearner { org.apache.zookeeper.server.auth.DigestLoginModule required username="learner" password="s3cret"; };
Other { org.apache.zookeeper.server.auth.DigestLoginModule required username="other" password="pw"; };`)
	login := func(cfg, jaas string) (string, error) {
		st, _ := mustApply(t, "dataDir=/tmp/x\n"+cfg)
		st.JAASConfig = jaas
		login, err := quorumLearnerLogin(st)
		if login.kerberos != nil {
			t.Errorf("%q: a Kerberos login from a DigestLoginModule section", jaas)
		}
		if login.digest == nil {
			return "", err
		}
		return login.digest.User + ":" + login.digest.Password, err
	}
	both := "quorum.auth.enableSasl=true\nquorum.auth.learnerRequireSasl=true\nquorum.auth.serverRequireSasl=true\nquorum.cnxn.threads.size=20\n"
	if got, err := login(both, digest); err != nil || got != "learner:s3cret" {
		t.Errorf("QuorumLearner: %q, %v", got, err)
	}
	if got, err := login(both+"quorum.auth.learner.saslLoginContext=Other\n", digest); err != nil || got != "other:pw" {
		t.Errorf("saslLoginContext=Other: %q, %v", got, err)
	}
	for _, cfg := range []string{"", "quorum.auth.enableSasl=true\n", "quorum.auth.learnerRequireSasl=true\n"} {
		if got, err := login(cfg, digest); err != nil || got != "" {
			t.Errorf("%q: login %q, %v; want none", cfg, got, err)
		}
	}
	for name, c := range map[string]struct{ cfg, jaas, want string }{
		"no JAAS file":    {both, "", "--jaas-config"},
		"missing section": {both + "quorum.auth.learner.saslLoginContext=Nope\n", digest, `no "Nope" section`},
		"other module": {both, write("ldap.jaas", `QuorumLearner { com.sun.security.auth.module.LdapLoginModule required; };`),
			"LdapLoginModule is not supported"},
	} {
		if _, err := login(c.cfg, c.jaas); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

func TestMemberQuorumSASLWarning(t *testing.T) {
	members := "server.1=127.0.0.1:2888:3888;2181\nserver.2=127.0.0.2:2888:3888;2181\nserver.3=127.0.0.3:2888:3888;2181\n"
	for cfg, warn := range map[string]bool{
		members + "quorum.auth.enableSasl=true\n":                 true,
		members + "quorum.auth.enableSasl=true\nsslQuorum=true\n": false,
		members:                         false,
		"quorum.auth.enableSasl=true\n": false,
	} {
		st, _ := mustApply(t, "dataDir=/tmp/x\n"+cfg)
		if got := memberQuorumSASLWarning(st); (got != "") != warn || (warn && !strings.Contains(got, "sslQuorum=true")) {
			t.Errorf("%q: warning %q, want one: %v", cfg, got, warn)
		}
	}
}
