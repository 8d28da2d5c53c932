package zktest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/zkraft/zkraft/internal/testing/krbtest"
)

// QuorumKerberosPrincipal is the principal (without realm) of every
// server of a StartQuorumKerberos ensemble, as server and as learner:
// zkquorum/<host> for the host its server lines name, which the leader
// requires of a learner's principal.
const QuorumKerberosPrincipal = "zkquorum/127.0.0.1"

// QuorumKerberosServicePrincipal is the ensemble's
// quorum.auth.kerberos.servicePrincipal: the learner asks for
// zkquorum/<the leader's host>.
const QuorumKerberosServicePrincipal = "zkquorum/_HOST"

// QuorumKerberos is a Kerberized ensemble's setup: its key table for
// QuorumKerberosPrincipal and the JAAS file its servers use.
type QuorumKerberos struct {
	Keytab, JAAS string
}

// StartQuorumKerberos starts an ensemble whose quorum connections
// require SASL GSSAPI (Kerberos) with kdc: every server logs in as
// QuorumKerberosPrincipal from one key table, in both its QuorumServer
// and QuorumLearner sections, and asks for the service principal
// QuorumKerberosServicePrincipal.
func StartQuorumKerberos(t *testing.T, kdc *krbtest.KDC) (*Ensemble, QuorumKerberos) {
	t.Helper()
	q := QuorumKerberos{Keytab: kdc.Keytab(t, QuorumKerberosPrincipal), JAAS: filepath.Join(t.TempDir(), "jaas.conf")}
	text := krbtest.Krb5Login("QuorumServer", q.Keytab, QuorumKerberosPrincipal) +
		krbtest.Krb5Login("QuorumLearner", q.Keytab, QuorumKerberosPrincipal)
	if err := os.WriteFile(q.JAAS, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	lines := append(append([]string{}, QuorumSASLLines...), "quorum.auth.kerberos.servicePrincipal="+QuorumKerberosServicePrincipal)
	e := StartWith(t, lines, "-Djava.security.auth.login.config="+q.JAAS, "-Djava.security.krb5.conf="+kdc.Conf)
	return e, q
}
