package acl

import (
	"testing"

	"github.com/zkraft/zkraft/jute"
)

// FuzzIP checks the ip scheme never panics and that a valid pattern always
// matches its own address.
func FuzzIP(f *testing.F) {
	for _, s := range []string{"10.0.0.1/8", "::1", "fe80::/10", "1:2:3:4:5:6:7:8/128", ":::", "1.2.3", "-1::", "+1.2.3.4/+8"} {
		f.Add(s, "10.0.0.1")
	}
	f.Fuzz(func(t *testing.T, pattern, addr string) {
		MatchIP(pattern, addr)
		if ValidIP(pattern) {
			b, _, _ := parseIPExpr(pattern)
			if len(b) != 4 && len(b) != 16 {
				t.Fatalf("%q parsed to %d bytes", pattern, len(b))
			}
		}
		if _, err := Fixup([]jute.ACL{{Perms: 1, ID: jute.Id{Scheme: "ip", ID: pattern}}, {Perms: 2, ID: jute.Id{Scheme: "digest", ID: addr}}}, nil); err != nil && err != jute.ErrInvalidACL {
			t.Fatal(err)
		}
	})
}

// FuzzDN checks the x509 and sasl schemes never panic: any id is either a
// valid ACL or ErrInvalidACL, and a valid one matches exactly itself.
func FuzzDN(f *testing.F) {
	for _, s := range []string{"CN=a,O=b", `CN="x, y"+UID=z`, "2.5.4.3=#0c0161", "bob/host@REALM", "a@b@c", `\`, `"`, ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		for _, scheme := range []string{SchemeX509, SchemeSASL} {
			who := jute.Id{Scheme: scheme, ID: id}
			list, err := Fixup([]jute.ACL{{Perms: jute.PermRead, ID: who}}, nil)
			if err != nil {
				if err != jute.ErrInvalidACL {
					t.Fatal(err)
				}
				continue
			}
			if !Check(list, jute.PermRead, []jute.Id{who}) || Check(list, jute.PermRead, []jute.Id{{Scheme: scheme, ID: id + "x"}}) {
				t.Fatalf("%s:%q does not match exactly itself", scheme, id)
			}
		}
	})
}
