package following

import (
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/testing/procs"
	"github.com/zkraft/zkraft/internal/testing/zktest"
)

// TestFollowZooKeeperQuorumSASL: a zkraft server follows a ZooKeeper 3.8
// ensemble whose quorum requires SASL DIGEST-MD5 (quorum.auth.* in
// zoo.cfg, the JAAS file's QuorumLearner section given as --jaas-config,
// as a ZooKeeper observer's -Djava.security.auth.login.config): a client
// of the observer writes through it and reads ZooKeeper's writes.
func TestFollowZooKeeperQuorumSASL(t *testing.T) {
	t.Parallel()
	jaas := zktest.QuorumSASLJAAS(t, "learner", "s3cret")
	e := zktest.StartQuorumSASL(t, jaas)
	zc := procs.ConnectTo(t, e.ClientAddrs()...)
	if _, err := zc.Create("/before", []byte("zk"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	// The JAAS file has no Server section: client SASL stays off, as on
	// ZooKeeper.
	obs := procs.StartFollowerWith(t, e, e.ObserverID, []string{"--jaas-config", jaas}, zktest.QuorumSASLLines...)
	readWriteThrough(t, zc, procs.ConnectTo(t, obs.ClientAddr))
}

// TestQuorumLearnerLogin: quorum.auth.enableSasl and learnerRequireSasl
// take the QuorumLearner section's DigestLoginModule credentials (or the
// section quorum.auth.learner.saslLoginContext names); without either
// key there is no login, as a ZooKeeper learner skips the exchange; a
// missing JAAS file or section, and another login module, are refused at
// startup.
// TestMemberQuorumSASLWarning: a zkraft member whose zoo.cfg keeps
// ZooKeeper's quorum SASL keys (an observer's after its cutover) is warned
// that they secure nothing between zkraft's members, unless sslQuorum
// does; a lone server has no member connections to warn about.
