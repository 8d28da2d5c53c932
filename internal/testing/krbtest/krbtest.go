// Package krbtest runs an MIT Kerberos KDC (Debian's krb5-kdc and
// krb5-admin-server) for tests: a realm in a temporary directory on a
// free loopback port, principals with key tables. Without the tools a
// test skips, and fails under CI=true (testenv.Require).
package krbtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/testenv"
	"github.com/zkraft/zkraft/internal/testing/testport"
	"github.com/zkraft/zkraft/internal/testing/testproc"
)

// Realm is the test realm.
const Realm = "ZKRAFT.TEST"

// KDC is a running krb5kdc for one test.
type KDC struct {
	// Conf is the krb5.conf naming the KDC (java.security.krb5.conf).
	Conf  string
	dir   string
	env   []string
	tools map[string]string // krb5kdc, kdb5_util and kadmin.local
}

// Start creates the realm's database and starts krb5kdc, TCP only; it is
// killed when t ends. Host names are used as given (no canonicalization,
// no reverse lookups), so principals may name 127.0.0.1.
func Start(t testing.TB) *KDC {
	t.Helper()
	tools := map[string]string{}
	for _, tool := range []string{"krb5kdc", "kdb5_util", "kadmin.local"} {
		path, err := exec.LookPath(tool)
		if err != nil {
			path, err = exec.LookPath(filepath.Join("/usr/sbin", tool)) // not on a non-root PATH
		}
		testenv.Require(t, err)
		tools[tool] = path
	}
	port, err := testport.Free()
	if err != nil {
		t.Fatal(err)
	}
	k := &KDC{dir: t.TempDir(), tools: tools}
	k.Conf = filepath.Join(k.dir, "krb5.conf")
	files := map[string]string{
		"krb5.conf": fmt.Sprintf("[libdefaults]\n default_realm = %s\n dns_lookup_realm = false\n dns_lookup_kdc = false\n"+
			" udp_preference_limit = 1\n rdns = false\n dns_canonicalize_hostname = false\n[realms]\n %s = {\n  kdc = 127.0.0.1:%d\n }\n",
			Realm, Realm, port),
		"kdc.conf": fmt.Sprintf("[kdcdefaults]\n kdc_ports = %d\n kdc_tcp_ports = %d\n[realms]\n %s = {\n  database_name = %s/principal\n"+
			"  key_stash_file = %s/stash\n  acl_file = %s/kadm5.acl\n  supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal\n }\n",
			port, port, Realm, k.dir, k.dir, k.dir),
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(k.dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	k.env = append(os.Environ(), "KRB5_CONFIG="+k.Conf, "KRB5_KDC_PROFILE="+filepath.Join(k.dir, "kdc.conf"))
	k.Run(t, "kdb5_util", "create", "-s", "-r", Realm, "-P", "masterpw")
	cmd := testproc.Command(k.tools["krb5kdc"], "-n", "-P", filepath.Join(k.dir, "kdc.pid"))
	cmd.Env = k.env
	if err := testproc.Start(t, cmd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { testproc.Kill(cmd); _ = cmd.Wait() })
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

// Run runs one of the KDC's tools (kdb5_util, kadmin.local) on its realm.
func (k *KDC) Run(t testing.TB, name string, args ...string) {
	t.Helper()
	cmd := testproc.Command(k.tools[name], args...)
	cmd.Env = k.env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

// Keytab adds principal (no realm; random keys) and exports its keys to
// a key table, whose path it returns.
func (k *KDC) Keytab(t testing.TB, principal string) string {
	t.Helper()
	path := filepath.Join(k.dir, strings.ReplaceAll(principal, "/", "_")+".keytab")
	k.Run(t, "kadmin.local", "-q", "addprinc -randkey "+principal)
	k.Run(t, "kadmin.local", "-q", "ktadd -k "+path+" "+principal)
	return path
}

// Forget deletes principal from the KDC's database; its key table stays.
func (k *KDC) Forget(t testing.TB, principal string) {
	t.Helper()
	k.Run(t, "kadmin.local", "-q", "delprinc -force "+principal)
}

// Krb5Login is a JAAS section logging principal (no realm) in from
// keytab with the JDK's Krb5LoginModule.
func Krb5Login(section, keytab, principal string) string {
	return fmt.Sprintf("%s {\n  com.sun.security.auth.module.Krb5LoginModule required\n  useKeyTab=true\n  keyTab=\"%s\"\n"+
		"  storeKey=true\n  useTicketCache=false\n  principal=\"%s@%s\";\n};\n", section, keytab, principal, Realm)
}
