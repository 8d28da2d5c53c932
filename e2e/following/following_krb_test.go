package following

import (
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/testing/krbtest"
	"github.com/zkraft/zkraft/internal/testing/procs"
	"github.com/zkraft/zkraft/internal/testing/zktest"
)

// TestFollowZooKeeperQuorumKerberos: a zkraft server follows a ZooKeeper
// 3.8 ensemble whose quorum requires SASL GSSAPI (a real MIT KDC; the
// JAAS file's QuorumLearner section logs in with Krb5LoginModule, given
// as --jaas-config, the KDC's krb5.conf as --krb5-conf, and
// quorum.auth.kerberos.servicePrincipal=zkquorum/_HOST in zoo.cfg): a
// client of the observer writes through it and reads ZooKeeper's writes.
func TestFollowZooKeeperQuorumKerberos(t *testing.T) {
	t.Parallel()
	kdc := krbtest.Start(t)
	e, q := zktest.StartQuorumKerberos(t, kdc)
	zc := procs.ConnectTo(t, e.ClientAddrs()...)
	if _, err := zc.Create("/before", []byte("zk"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	lines := append(append([]string{}, zktest.QuorumSASLLines...), "quorum.auth.kerberos.servicePrincipal="+zktest.QuorumKerberosServicePrincipal)
	obs := procs.StartFollowerWith(t, e, e.ObserverID, []string{"--jaas-config", q.JAAS, "--krb5-conf", kdc.Conf}, lines...)
	readWriteThrough(t, zc, procs.ConnectTo(t, obs.ClientAddr))
}

// TestQuorumLearnerLoginKerberos: a QuorumLearner section with
// Krb5LoginModule is a Kerberos login from its key table as its
// principal, with the --krb5-conf configuration and
// quorum.auth.kerberos.servicePrincipal (default zkquorum/localhost); no
// key table, a principal without realm, an unreadable key table or
// krb5.conf, and a section with both login modules are refused.
