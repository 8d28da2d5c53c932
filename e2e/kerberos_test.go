package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// kdc is an MIT Kerberos KDC (Debian's krb5-kdc) for one test: realm
// ZKRAFT.TEST in a temporary directory, on a free 127.0.0.1 port, TCP only.
type kdc struct {
	dir, conf string
	env       []string
	tools     map[string]string // krb5kdc, kdb5_util and kadmin.local
}

const krbRealm = "ZKRAFT.TEST"

// startKDC creates the realm's database and starts krb5kdc; it is killed
// when t ends.
func startKDC(t *testing.T) *kdc {
	t.Helper()
	tools := map[string]string{}
	for _, tool := range []string{"krb5kdc", "kdb5_util", "kadmin.local"} {
		path, err := exec.LookPath(tool)
		if err != nil {
			path, err = exec.LookPath(filepath.Join("/usr/sbin", tool)) // not on a non-root PATH
		}
		requireTool(t, err)
		tools[tool] = path
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	k := &kdc{dir: t.TempDir(), tools: tools}
	k.conf = filepath.Join(k.dir, "krb5.conf")
	files := map[string]string{
		"krb5.conf": fmt.Sprintf("[libdefaults]\n default_realm = %s\n dns_lookup_realm = false\n dns_lookup_kdc = false\n"+
			" udp_preference_limit = 1\n rdns = false\n[realms]\n %s = {\n  kdc = 127.0.0.1:%d\n }\n", krbRealm, krbRealm, port),
		"kdc.conf": fmt.Sprintf("[kdcdefaults]\n kdc_ports = %d\n kdc_tcp_ports = %d\n[realms]\n %s = {\n  database_name = %s/principal\n"+
			"  key_stash_file = %s/stash\n  acl_file = %s/kadm5.acl\n  supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal\n }\n",
			port, port, krbRealm, k.dir, k.dir, k.dir),
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(k.dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	k.env = append(os.Environ(), "KRB5_CONFIG="+k.conf, "KRB5_KDC_PROFILE="+filepath.Join(k.dir, "kdc.conf"))
	k.run(t, "kdb5_util", "create", "-s", "-r", krbRealm, "-P", "masterpw")
	cmd := exec.Command(k.tools["krb5kdc"], "-n", "-P", filepath.Join(k.dir, "kdc.pid"))
	cmd.Env = k.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the KDC does not listen")
		}
	}
	return k
}

func (k *kdc) run(t *testing.T, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(k.tools[name], args...)
	cmd.Env = k.env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

// keytab adds principal (random keys) and exports its keys to a key table.
func (k *kdc) keytab(t *testing.T, principal string) string {
	t.Helper()
	path := filepath.Join(k.dir, strings.ReplaceAll(principal, "/", "_")+".keytab")
	k.run(t, "kadmin.local", "-q", "addprinc -randkey "+principal)
	k.run(t, "kadmin.local", "-q", "ktadd -k "+path+" "+principal)
	return path
}

// krb5Login is a JAAS section logging principal in from keytab.
func krb5Login(section, keytab, principal string) string {
	return fmt.Sprintf("%s {\n  com.sun.security.auth.module.Krb5LoginModule required\n  useKeyTab=true\n  keyTab=\"%s\"\n"+
		"  storeKey=true\n  useTicketCache=false\n  principal=\"%s@%s\";\n};\n", section, keytab, principal, krbRealm)
}

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
	k := startKDC(t)
	dir := t.TempDir()
	server := jaasFile(t, dir, "server.jaas", krb5Login("Server", k.keytab(t, "zookeeper/localhost"), "zookeeper/localhost"))
	clients, keytabs := map[string]string{}, map[string]string{}
	for _, p := range []string{"client", "svc/localhost"} {
		keytabs[p] = k.keytab(t, p)
		clients[p] = jaasFile(t, dir, strings.ReplaceAll(p, "/", "_")+".jaas", krb5Login("Client", keytabs[p], p))
	}
	// A key table for a principal the KDC then forgets.
	gone := k.keytab(t, "gone")
	k.run(t, "kadmin.local", "-q", "delprinc -force gone")
	clients["gone"] = jaasFile(t, dir, "gone.jaas", krb5Login("Client", gone, "gone"))

	krb5 := "-Djava.security.krb5.conf=" + k.conf
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
		{"client", "whoami\ncreate /krb mine sasl:client@" + krbRealm + ":cdrwa\ngetAcl /krb\nget /krb\n" +
			"create /krb-other x sasl:svc/localhost@" + krbRealm + ":cdrwa\nget /krb-other\nquit\n", "sasl: client@" + krbRealm},
		{"svc/localhost", "whoami\nget /krb\nget /krb-other\nquit\n", "sasl: svc/localhost@" + krbRealm},
		{"gone", "whoami\nget /krb-other\nquit\n", "AuthFailed"},
	}
	// kazoo (python3-pure-sasl over python3-kerberos) authenticates alike.
	kazooAlike(t, "krb.py", "id=Id(scheme='sasl', id='client@"+krbRealm+"')", func(kind string) []string {
		_, port, _ := net.SplitHostPort(addrs[kind])
		return []string{port, k.conf, keytabs["client"], "client@" + krbRealm, "/kazoo-krb"}
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
