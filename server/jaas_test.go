package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSASLUsersFromJAAS(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.jaas", `// ZooKeeper's server section
Server {
       org.apache.zookeeper.server.auth.DigestLoginModule required
       user_super="adminsecret"
       user_bob="bob;secret=1" /* quoted: ; and = are data */
       debug=true;
};
Client {
       org.apache.zookeeper.server.auth.DigestLoginModule required
       username="bob"
       password="bobsecret";
};
`)
	sasl, err := loadSASLServer(good, "Server")
	users := sasl.users
	if err != nil || len(users) != 2 || users["super"] != "adminsecret" || users["bob"] != "bob;secret=1" {
		t.Fatalf("%v %v", users, err)
	}
	for name, c := range map[string]struct{ text, section, want string }{
		"no section":                   {"Other { org.apache.zookeeper.server.auth.DigestLoginModule required user_a=\"b\"; };", "Server", "no \"Server\" section"},
		"kerberos without a key table": {"Server { com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true; };", "Server", "only useKeyTab=true with a keyTab"},
		"kerberos missing key table":   {"Server { com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab=\"/nonexistent\" principal=\"zookeeper/h@R\"; };", "Server", "keyTab /nonexistent"},
		"other module":                 {"Server { com.example.Login required; };", "Server", "not supported"},
		"no users":                     {"Server { org.apache.zookeeper.server.auth.DigestLoginModule required; };", "Server", "no user_"},
		"unclosed":                     {"Server { org.apache.zookeeper.server.auth.DigestLoginModule required user_a=\"b\";", "Server", "not closed"},
		"missing semi":                 {"Server { org.apache.zookeeper.server.auth.DigestLoginModule required user_a=\"b\" };", "Server", "want ;"},
		"open quote":                   {"Server { x required user_a=\"b; };", "Server", "unterminated"},
	} {
		_, err := loadSASLServer(write(name+".jaas", c.text), c.section)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
	if _, err := loadSASLServer(filepath.Join(dir, "missing.jaas"), "Server"); err == nil {
		t.Error("a missing file was accepted")
	}
}
