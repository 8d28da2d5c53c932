package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/testing/zktest"
)

// TestFollowZooKeeperQuorumSASL: a zkraft server follows a ZooKeeper 3.8
// ensemble whose quorum requires SASL DIGEST-MD5 (quorum.auth.* in
// zoo.cfg, the JAAS file's QuorumLearner section given as --jaas-config,
// as a ZooKeeper observer's -Djava.security.auth.login.config): a client
// of the observer writes through it and reads ZooKeeper's writes.
func TestFollowZooKeeperQuorumSASL(t *testing.T) {
	jaas := zktest.QuorumSASLJAAS(t, "learner", "s3cret")
	e := zktest.StartQuorumSASL(t, jaas)
	zc := connectTo(t, e.ClientAddrs()...)
	if _, err := zc.Create("/before", []byte("zk"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	// The JAAS file has no Server section: client SASL stays off, as on
	// ZooKeeper.
	obs := startFollowerWith(t, e, e.ObserverID, []string{"--jaas-config", jaas}, zktest.QuorumSASLLines...)
	readWriteThrough(t, zc, connectTo(t, obs.clientAddr))
}

// TestQuorumLearnerLogin: quorum.auth.enableSasl and learnerRequireSasl
// take the QuorumLearner section's DigestLoginModule credentials (or the
// section quorum.auth.learner.saslLoginContext names); without either
// key there is no login, as a ZooKeeper learner skips the exchange; a
// missing JAAS file or section, and another login module, are refused at
// startup.
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

// TestMemberQuorumSASLWarning: a zkraft member whose zoo.cfg keeps
// ZooKeeper's quorum SASL keys (an observer's after its cutover) is warned
// that they secure nothing between zkraft's members, unless sslQuorum
// does; a lone server has no member connections to warn about.
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
