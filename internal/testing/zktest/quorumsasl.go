package zktest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// QuorumSASLJAAS writes a JAAS file for ZooKeeper's quorum SASL with
// DIGEST-MD5 and returns its path: a QuorumServer section whose only user
// is user/password, and a QuorumLearner section logging in as them, so
// the ensemble's servers authenticate among themselves with it.
func QuorumSASLJAAS(t *testing.T, user, password string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "jaas.conf")
	text := fmt.Sprintf(`QuorumServer {
	org.apache.zookeeper.server.auth.DigestLoginModule required
	user_%s="%s";
};
QuorumLearner {
	org.apache.zookeeper.server.auth.DigestLoginModule required
	username="%s"
	password="%s";
};
`, user, password, user, password)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// QuorumSASLLines are the zoo.cfg lines of quorum SASL required both
// ways, as ZooKeeper's documentation configures it.
var QuorumSASLLines = []string{"quorum.auth.enableSasl=true", "quorum.auth.learnerRequireSasl=true",
	"quorum.auth.serverRequireSasl=true", "quorum.auth.learner.saslLoginContext=QuorumLearner",
	"quorum.auth.server.saslLoginContext=QuorumServer", "quorum.cnxn.threads.size=20"}

// StartQuorumSASL starts an ensemble whose quorum connections require
// SASL DIGEST-MD5 with the JAAS file at jaas (QuorumSASLJAAS).
func StartQuorumSASL(t *testing.T, jaas string) *Ensemble {
	t.Helper()
	return StartWith(t, QuorumSASLLines, "-Djava.security.auth.login.config="+jaas)
}
