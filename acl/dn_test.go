package acl

import (
	"testing"

	"github.com/zkraft/zkraft/jute"
)

func TestValidDN(t *testing.T) {
	for _, dn := range []string{"", "CN=localhost", "CN=client,OU=ops,O=example,C=DE", "cn=a+uid=b;O=x",
		`CN="a, b",O=c`, `CN=a\,b`, "2.5.4.3=#0c0161", "OID.2.5.4.3=x", "EMAILADDRESS=a@b.c"} {
		if !ValidDN(dn) {
			t.Errorf("ValidDN(%q) = false", dn)
		}
	}
	for _, dn := range []string{"notadn", "FOO=bar", "CN=a,,O=b", "=x", "CN=a,O", `CN="unterminated`, "2..5=x", "OID.=x"} {
		if ValidDN(dn) {
			t.Errorf("ValidDN(%q) = true", dn)
		}
	}
}

// TestX509Scheme: x509 ACLs are validated as distinguished names, matched
// exactly, and an "auth" entry expands to the caller's x509 identity, as
// ZooKeeper's X509AuthenticationProvider (isAuthenticated).
func TestX509Scheme(t *testing.T) {
	client := jute.Id{Scheme: SchemeX509, ID: "CN=client,O=example"}
	list, err := Fixup([]jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: SchemeAuth}}}, []jute.Id{{Scheme: SchemeIP, ID: "127.0.0.1"}, client})
	if err != nil || len(list) != 1 || list[0].ID != client {
		t.Fatalf("auth expansion: %v %v", list, err)
	}
	if _, err := Fixup([]jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: SchemeX509, ID: "notadn"}}}, nil); err != jute.ErrInvalidACL {
		t.Fatalf("x509:notadn: %v", err)
	}
	if !Check(list, jute.PermRead, []jute.Id{client}) {
		t.Fatal("the certificate's identity is denied")
	}
	if Check(list, jute.PermRead, []jute.Id{{Scheme: SchemeX509, ID: "CN=client,O=other"}, {Scheme: SchemeDigest, ID: "CN=client,O=example"}}) {
		t.Fatal("another name, or the same name under another scheme, is allowed")
	}
}
