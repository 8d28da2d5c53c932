package acl

import (
	"reflect"
	"strings"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

func id(s, i string) jute.Id { return jute.Id{Scheme: s, ID: i} }

func entry(perms int32, s, i string) jute.ACL { return jute.ACL{Perms: perms, ID: id(s, i)} }

func TestDigestID(t *testing.T) {
	// The value ZooKeeper's admin guide gives for super:test.
	if got := DigestID("super", "test"); got != "super:D/InIHSb7yEEbrWz8b9l71RjZJU=" {
		t.Errorf("DigestID(super, test) = %q", got)
	}
	if id := DigestFromAuth("a:b:c"); id != DigestID("a", "b:c") {
		t.Errorf("DigestFromAuth splits at the first colon: %q", id)
	}
	if id := DigestFromAuth("super:test"); id != "super:D/InIHSb7yEEbrWz8b9l71RjZJU=" {
		t.Errorf("DigestFromAuth(super:test) = %q", id)
	}
	// No colon: the whole credential is the user, as generateDigest does.
	if id := DigestFromAuth("nocolon"); !strings.HasPrefix(id, "nocolon:") || len(id) != len("nocolon:")+28 {
		t.Errorf("DigestFromAuth(nocolon) = %q", id)
	}
}

func TestCheck(t *testing.T) {
	bob := id("digest", DigestID("bob", "pw"))
	cases := []struct {
		name string
		list []jute.ACL
		perm int32
		ids  []jute.Id
		want bool
	}{
		{"empty list allows all", nil, jute.PermAdmin, nil, true},
		{"world", []jute.ACL{entry(jute.PermRead, "world", "anyone")}, jute.PermRead, nil, true},
		{"world wrong perm", []jute.ACL{entry(jute.PermRead, "world", "anyone")}, jute.PermWrite, nil, false},
		{"world other id", []jute.ACL{entry(31, "world", "someone")}, jute.PermRead, []jute.Id{id("world", "someone")}, false},
		{"any bit of perm", []jute.ACL{entry(jute.PermAdmin, "world", "anyone")}, jute.PermRead | jute.PermAdmin, nil, true},
		{"super", []jute.ACL{entry(jute.PermRead, "digest", "x:y")}, jute.PermAdmin, []jute.Id{id("super", "")}, true},
		{"digest match", []jute.ACL{entry(31, bob.Scheme, bob.ID)}, jute.PermWrite, []jute.Id{id("ip", "1.2.3.4"), bob}, true},
		{"digest mismatch", []jute.ACL{entry(31, bob.Scheme, bob.ID)}, jute.PermWrite, []jute.Id{id("digest", "bob:zz")}, false},
		{"scheme must match", []jute.ACL{entry(31, "ip", "1.2.3.4")}, jute.PermRead, []jute.Id{id("digest", "1.2.3.4")}, false},
		{"ip exact", []jute.ACL{entry(31, "ip", "10.0.0.1")}, jute.PermRead, []jute.Id{id("ip", "10.0.0.1")}, true},
		{"ip subnet", []jute.ACL{entry(31, "ip", "10.0.0.0/8")}, jute.PermRead, []jute.Id{id("ip", "10.200.3.4")}, true},
		{"ip outside", []jute.ACL{entry(31, "ip", "10.0.0.0/8")}, jute.PermRead, []jute.Id{id("ip", "11.0.0.1")}, false},
		{"auth entry never matches", []jute.ACL{entry(31, "auth", "")}, jute.PermRead, []jute.Id{id("auth", "")}, false},
		{"no ids", []jute.ACL{entry(31, "ip", "10.0.0.1")}, jute.PermRead, nil, false},
	}
	for _, c := range cases {
		if got := Check(c.list, c.perm, c.ids); got != c.want {
			t.Errorf("%s: got %v", c.name, got)
		}
	}
}

func TestMatchIP(t *testing.T) {
	cases := []struct {
		pattern, addr string
		want          bool
	}{
		{"127.0.0.1", "127.0.0.1", true},
		{"127.0.0.1", "127.0.0.2", false},
		{"127.0.0.0/24", "127.0.0.200", true},
		{"127.0.0.0/0", "8.8.8.8", true},
		{"192.168.1.0/23", "192.168.0.9", true},
		{"192.168.1.0/23", "192.168.2.9", false},
		{"127.0.0.1/33", "127.0.0.1", false},
		{"127.0.0.1/-1", "127.0.0.1", false},
		{"127.0.0.1/x", "127.0.0.1", false},
		{"127.0.0", "127.0.0.1", false},
		{"::1", "::1", true},
		{"::1", "0:0:0:0:0:0:0:1", true},
		{"fe80::/16", "fe80::1234", true},
		{"fe80::/16", "fe81::1", false},
		{"2001:db8::/129", "2001:db8::1", false},
		{"::1", "127.0.0.1", false},
		{"127.0.0.1", "::1", false},
		{"::ffff:10.0.0.1", "10.0.0.1", false},
		{"::", "0:0:0:0:0:0:0:0", true},
		{"1::", "1:0:0:0:0:0:0:0", true},
		{"1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8", true},
		{"1:2:3:4:5:6:7", "1:2:3:4:5:6:7:0", false},
		{"1:2:3:4::5:6:7:8", "1:2:3:4:5:6:7:8", false},
		{"1::2::3", "1::2:0:3", false},
		{":::", "::", false},
		{"12345::", "::", false},
		{"fe80::1%eth0", "fe80::1", false},
		{"1.2.3.4", "1.2.3.4:5", false},
		{"localhost", "localhost", false},
		{"10.0.0.1", "garbage", false},
		{"256.0.0.1", "0.0.0.1", false},
	}
	for _, c := range cases {
		if got := MatchIP(c.pattern, c.addr); got != c.want {
			t.Errorf("MatchIP(%q, %q) = %v", c.pattern, c.addr, got)
		}
	}
}

func TestFixup(t *testing.T) {
	bob := id("digest", DigestID("bob", "pw"))
	alice := id("digest", DigestID("alice", "pw"))
	ip := id("ip", "127.0.0.1")
	super := id("super", "")
	cases := []struct {
		name string
		in   []jute.ACL
		ids  []jute.Id
		want []jute.ACL
		err  bool
	}{
		{"nil", nil, nil, nil, true},
		{"empty", []jute.ACL{}, nil, nil, true},
		{"world", []jute.ACL{entry(31, "world", "anyone")}, nil, []jute.ACL{entry(31, "world", "anyone")}, false},
		{"world other", []jute.ACL{entry(31, "world", "x")}, nil, nil, true},
		{"perms not validated", []jute.ACL{entry(0, "world", "anyone"), entry(64, "world", "anyone")}, nil,
			[]jute.ACL{entry(0, "world", "anyone"), entry(64, "world", "anyone")}, false},
		{"dedupe", []jute.ACL{entry(1, "world", "anyone"), entry(3, "ip", "1.2.3.4"), entry(1, "world", "anyone")}, nil,
			[]jute.ACL{entry(1, "world", "anyone"), entry(3, "ip", "1.2.3.4")}, false},
		{"auth expands digests only", []jute.ACL{entry(7, "auth", "")}, []jute.Id{ip, bob, super, alice},
			[]jute.ACL{{Perms: 7, ID: bob}, {Perms: 7, ID: alice}}, false},
		{"auth id ignored", []jute.ACL{entry(7, "auth", "whatever")}, []jute.Id{bob}, []jute.ACL{{Perms: 7, ID: bob}}, false},
		{"auth ip only", []jute.ACL{entry(7, "auth", "")}, []jute.Id{ip, super}, nil, true},
		{"auth none", []jute.ACL{entry(7, "auth", "")}, nil, nil, true},
		{"digest ok", []jute.ACL{entry(31, "digest", "u:h")}, nil, []jute.ACL{entry(31, "digest", "u:h")}, false},
		{"digest empty user", []jute.ACL{entry(31, "digest", ":h")}, nil, []jute.ACL{entry(31, "digest", ":h")}, false},
		{"digest trailing colon", []jute.ACL{entry(31, "digest", "u:h:")}, nil, []jute.ACL{entry(31, "digest", "u:h:")}, false},
		{"digest no hash", []jute.ACL{entry(31, "digest", "u:")}, nil, nil, true},
		{"digest no colon", []jute.ACL{entry(31, "digest", "u")}, nil, nil, true},
		{"digest three parts", []jute.ACL{entry(31, "digest", "a:b:c")}, nil, nil, true},
		{"ip ok", []jute.ACL{entry(31, "ip", "10.0.0.0/8")}, nil, []jute.ACL{entry(31, "ip", "10.0.0.0/8")}, false},
		{"ip v6", []jute.ACL{entry(31, "ip", "::1/128")}, nil, []jute.ACL{entry(31, "ip", "::1/128")}, false},
		{"ip v6 bits", []jute.ACL{entry(31, "ip", "::1/129")}, nil, nil, true},
		{"ip v4-mapped", []jute.ACL{entry(31, "ip", "::ffff:1.2.3.4")}, nil, nil, true},
		{"ip no dot", []jute.ACL{entry(31, "ip", "1234")}, nil, nil, true},
		{"ip bad", []jute.ACL{entry(31, "ip", "10.0.0/8")}, nil, nil, true},
		{"ip bad bits", []jute.ACL{entry(31, "ip", "10.0.0.0/40")}, nil, nil, true},
		{"super scheme", []jute.ACL{entry(31, "super", "")}, nil, nil, true},
		{"unknown scheme", []jute.ACL{entry(31, "kerberos", "bob")}, nil, nil, true},
		{"sasl bad", []jute.ACL{entry(31, "sasl", "a@b@c")}, nil, nil, true},
		{"one bad entry", []jute.ACL{entry(31, "world", "anyone"), entry(31, "x", "y")}, nil, nil, true},
	}
	for _, c := range cases {
		got, err := Fixup(c.in, c.ids)
		if (err != nil) != c.err {
			t.Errorf("%s: err %v", c.name, err)
			continue
		}
		if err != nil {
			if err != jute.ErrInvalidACL {
				t.Errorf("%s: err %v, want InvalidACL", c.name, err)
			}
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %+v want %+v", c.name, got, c.want)
		}
	}
}

// TestFixupKeepsFinalLists: a list Fixup would not change comes back
// itself (create and setACL then allocate nothing for it); any other comes
// back as a new slice, the input untouched.
func TestFixupKeepsFinalLists(t *testing.T) {
	open := []jute.ACL{entry(31, "world", "anyone")}
	if got, err := Fixup(open, nil); err != nil || &got[0] != &open[0] {
		t.Errorf("world:anyone: %v, %p vs %p", err, got, open)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = Fixup(open, nil) }); n != 0 {
		t.Errorf("world:anyone: %.0f allocations", n)
	}
	two := []jute.ACL{entry(1, "world", "anyone"), entry(31, "ip", "127.0.0.1")}
	if got, _ := Fixup(two, nil); &got[0] != &two[0] {
		t.Error("a final list of two entries was copied")
	}
	dup := []jute.ACL{entry(1, "world", "anyone"), entry(1, "world", "anyone")}
	if got, _ := Fixup(dup, nil); len(got) != 1 || &got[0] == &dup[0] || len(dup) != 2 || dup[1] != dup[0] {
		t.Errorf("duplicates: %+v from %+v", got, dup)
	}
	auth := []jute.ACL{entry(7, "auth", "")}
	bob := id("digest", DigestID("bob", "pw"))
	if got, _ := Fixup(auth, []jute.Id{bob}); len(got) != 1 || got[0].ID != bob || auth[0].ID.Scheme != "auth" {
		t.Errorf("auth: %+v from %+v", got, auth)
	}
}

func TestMaskDigest(t *testing.T) {
	for in, want := range map[string]string{
		"bob:hash=":      "bob:x",
		"u:h:":           "u:x",
		"nocolon":        "nocolon",
		":h":             ":x",
		"u:h\nz":         "u:x\nz",
		"a:b\r\nc:d":     "a:x\r\nc:x",
		"a:b\u2028c:d:e": "a:x\u2028c:x",
	} {
		if got := maskDigest(in); got != want {
			t.Errorf("maskDigest(%q) = %q want %q", in, got, want)
		}
	}
}

func TestMaskDigests(t *testing.T) {
	in := []jute.ACL{entry(31, "digest", "bob:hash="), entry(1, "world", "anyone"), entry(1, "digest", "nocolon")}
	got := MaskDigests(in)
	want := []jute.ACL{entry(31, "digest", "bob:x"), entry(1, "world", "anyone"), entry(1, "digest", "nocolon")}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v", got)
	}
	if in[0].ID.ID != "bob:hash=" {
		t.Fatal("input modified")
	}
	plain := []jute.ACL{entry(1, "world", "anyone")}
	if got := MaskDigests(plain); &got[0] != &plain[0] {
		t.Fatal("copied a list with nothing to mask")
	}
}

// TestGranted: the permissions held together by a set of identities.
func TestGranted(t *testing.T) {
	alice := jute.Id{Scheme: "digest", ID: "alice:x"}
	list := []jute.ACL{
		{Perms: jute.PermRead, ID: jute.Id{Scheme: "world", ID: "anyone"}},
		{Perms: jute.PermWrite | jute.PermCreate, ID: alice},
	}
	for _, tc := range []struct {
		ids  []jute.Id
		want int32
	}{
		{nil, jute.PermRead},
		{[]jute.Id{alice}, jute.PermRead | jute.PermWrite | jute.PermCreate},
		{[]jute.Id{{Scheme: "super"}}, jute.PermAll},
	} {
		if got := Granted(list, tc.ids); got != tc.want {
			t.Errorf("Granted(%v) = %#x, want %#x", tc.ids, got, tc.want)
		}
	}
	if got := Granted(nil, nil); got != jute.PermAll {
		t.Errorf("empty list grants %#x", got)
	}
}
