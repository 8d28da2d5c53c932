package e2e

import (
	"net"
	"strings"
	"testing"

	"github.com/zkraft/zkraft/internal/testing/krbtest"
)

// TestSASLKerberos authenticates the Java client with SASL GSSAPI
// (Kerberos, a real MIT KDC) against zkraft (--jaas-config) and Apache
// ZooKeeper (-Djava.security.auth.login.config), both given the same JAAS
// Server section (Krb5LoginModule with the zookeeper/localhost key table),
// and expects identical zkCli transcripts: the principal as the sasl
// identity (whoami), an ACL for it that admits it and one for another
// principal that does not, and a second principal (with an instance,
// svc/localhost) seeing that from its side; then a client whose
// principal the KDC does not know fails with AuthFailed. kazoo
// authenticates with GSSAPI and sees its sasl ACL alike on both.
func TestSASLKerberos(t *testing.T) {
	skipShort(t)
	t.Parallel()
	needJava(t)
	k := krbtest.Start(t)
	dir := t.TempDir()
	server := jaasFile(t, dir, "server.jaas", krbtest.Krb5Login("Server", k.Keytab(t, "zookeeper/localhost"), "zookeeper/localhost"))
	clients, keytabs := map[string]string{}, map[string]string{}
	for _, p := range []string{"client", "svc/localhost"} {
		keytabs[p] = k.Keytab(t, p)
		clients[p] = jaasFile(t, dir, strings.ReplaceAll(p, "/", "_")+".jaas", krbtest.Krb5Login("Client", keytabs[p], p))
	}
	// A key table for a principal the KDC then forgets.
	gone := k.Keytab(t, "gone")
	k.Forget(t, "gone")
	clients["gone"] = jaasFile(t, dir, "gone.jaas", krbtest.Krb5Login("Client", gone, "gone"))

	krb5 := "-Djava.security.krb5.conf=" + k.Conf
	addrs := map[string]string{}
	for _, kind := range []string{targetZkraft, targetZookeeper} {
		s := StartServer(t, ServerOptions{Kind: kind,
			ZooCfg:    []string{"authProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider"},
			ExtraArgs: []string{"--jaas-config", server},
			JVMArgs:   []string{"-Djava.security.auth.login.config=" + server, krb5},
		})
		addrs[kind] = s.Addr
	}
	run := func(kind, jaas, script string) string {
		return zkCli(t, addrs[kind], script, "-Djava.security.auth.login.config="+jaas, krb5)
	}
	steps := []struct{ principal, script, want string }{
		{"client", "whoami\ncreate /krb mine sasl:client@" + krbtest.Realm + ":cdrwa\ngetAcl /krb\nget /krb\n" +
			"create /krb-other x sasl:svc/localhost@" + krbtest.Realm + ":cdrwa\nget /krb-other\nquit\n", "sasl: client@" + krbtest.Realm},
		{"svc/localhost", "whoami\nget /krb\nget /krb-other\nquit\n", "sasl: svc/localhost@" + krbtest.Realm},
		{"gone", "whoami\nget /krb-other\nquit\n", "AuthFailed"},
	}
	// kazoo (python3-pure-sasl over python3-kerberos) authenticates alike.
	kazooAlike(t, "krb.py", "id=Id(scheme='sasl', id='client@"+krbtest.Realm+"')", func(kind string) []string {
		_, port, _ := net.SplitHostPort(addrs[kind])
		return []string{port, k.Conf, keytabs["client"], "client@" + krbtest.Realm, "/kazoo-krb"}
	})
	for _, st := range steps {
		z, k := run(targetZookeeper, clients[st.principal], st.script), run(targetZkraft, clients[st.principal], st.script)
		if z != k {
			t.Errorf("%s: transcripts differ\nzookeeper:\n%s\nzkraft:\n%s", st.principal, z, k)
		}
		if !strings.Contains(k, st.want) {
			t.Errorf("%s: zkraft transcript lacks %q:\n%s", st.principal, st.want, k)
		}
	}
}
