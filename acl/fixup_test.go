package acl

import (
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

// quadraticFixup is fixupACL as ZooKeeper writes it (removeDuplicates
// with List.contains, then validation and "auth" expansion): the
// reference Fixup and Validate must agree with.
func quadraticFixup(list []jute.ACL, ids []jute.Id) ([]jute.ACL, error) {
	var uniq []jute.ACL
	for _, a := range list {
		dup := false
		for _, b := range uniq {
			dup = dup || a == b
		}
		if !dup {
			uniq = append(uniq, a)
		}
	}
	if len(uniq) == 0 {
		return nil, jute.ErrInvalidACL
	}
	var out []jute.ACL
	for _, a := range uniq {
		switch {
		case a.ID.Scheme == SchemeWorld && a.ID.ID == "anyone":
			out = append(out, a)
		case a.ID.Scheme == SchemeAuth:
			found := false
			// request.authInfo: the identity set, as it iterates.
			for _, id := range IdentityOrder(ids) {
				if authenticated(id.Scheme) {
					found = true
					out = append(out, jute.ACL{Perms: a.Perms, ID: id})
				}
			}
			if !found {
				return nil, jute.ErrInvalidACL
			}
		case validEntry(a):
			out = append(out, a)
		default:
			return nil, jute.ErrInvalidACL
		}
	}
	return out, nil
}

// TestFixupMatchesZooKeeper compares Fixup and Validate with the
// quadratic reference on random lists, short and long (past smallList),
// with duplicates, "auth" entries and invalid ones.
func TestFixupMatchesZooKeeper(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	pool := []jute.ACL{
		entry(31, "world", "anyone"), entry(1, "world", "anyone"), entry(31, "world", "nobody"),
		entry(31, "digest", "u:h"), entry(3, "digest", "u:h"), entry(31, "digest", "nocolon"),
		entry(31, "digest", "a:b::"), entry(31, "digest", "::"),
		entry(31, "ip", "10.0.0.1"), entry(31, "ip", "10.0.0.0/8"), entry(31, "ip", "x"),
		entry(31, "auth", ""), entry(5, "auth", "ignored"), entry(31, "sasl", "bob@R"), entry(31, "x509", "CN=a"),
		entry(31, "bogus", "x"),
	}
	idSets := [][]jute.Id{nil, {id("ip", "1.2.3.4")}, {id("digest", "u:h"), id("sasl", "bob@R")}}
	for i := 0; i < 20000; i++ {
		n := rng.Intn(4)
		if rng.Intn(4) == 0 {
			n = smallList + rng.Intn(20)
		}
		list := make([]jute.ACL, n)
		for j := range list {
			list[j] = pool[rng.Intn(len(pool))]
			if rng.Intn(3) == 0 { // mostly valid lists, so expansion is exercised
				list[j] = pool[rng.Intn(2)]
			}
		}
		ids := idSets[rng.Intn(len(idSets))]
		want, wantErr := quadraticFixup(list, ids)
		got, err := Fixup(list, ids)
		if err != wantErr || !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("Fixup(%v, %v) = %v, %v; want %v, %v", list, ids, got, err, want, wantErr)
		}
		if verr := Validate(list, ids); verr != wantErr {
			t.Fatalf("Validate(%v, %v) = %v, want %v", list, ids, verr, wantErr)
		}
	}
}

// TestValidDigestMatchesJavaSplit: the colon count stands for Java's
// id.split(":") yielding two parts after trailing empties are dropped.
func TestValidDigestMatchesJavaSplit(t *testing.T) {
	for id, want := range map[string]bool{
		"a:b": true, "a:b::": true, ":b": true, "a:": false, "::": false, "": false,
		"a::b": false, "a": false, "a:b:c": false, ":": false, "a:b:": true,
	} {
		if got := validDigest(id); got != want {
			t.Errorf("validDigest(%q) = %v, want %v", id, got, want)
		}
	}
}

// TestFixupExpandsAuthInSetOrder: an "auth" entry expands in the order the
// connection's identity set iterates (as whoAmI lists it), not the order
// the identities were added. The orders are ZooKeeper 3.8.0's: kazoo
// connected, sent "addauth digest USER:pw" for each user in turn, created
// a node with auth::cdrwa and listed getACL. The third case grows the set
// past 12 (with the ip identity) after u3 and u9 share a bin with u2, so
// the table's doubling reverses them.
func TestFixupExpandsAuthInSetOrder(t *testing.T) {
	for _, tc := range []struct{ added, want string }{
		{"alice bob carol dave erin", "bob carol erin dave alice"},
		{"u1 u2 u3 u4 u5 u6 u7 u8 u9 u10 u11 u12 u13", "u3 u9 u5 u11 u4 u1 u6 u13 u2 u12 u7 u8 u10"},
		{"u13 u12 u11 u10 u9 u8 u7 u6 u5 u4 u3 u2 u1", "u9 u3 u5 u11 u4 u1 u13 u6 u2 u12 u7 u8 u10"},
		{"u3 u9 u2 u1 u4 u5 u6 u7 u8 u10 u11", "u9 u3 u5 u11 u4 u1 u6 u2 u7 u8 u10"},
		{"u3 u9 u2 u1 u4 u5 u6 u7 u8 u10 u11 u12 u13", "u9 u3 u5 u11 u4 u1 u6 u13 u2 u12 u7 u8 u10"},
	} {
		ids := []jute.Id{id("ip", "127.0.0.1")} // the connection's first identity
		for _, u := range strings.Fields(tc.added) {
			ids = append(ids, id("digest", DigestID(u, "pw")))
		}
		got, err := Fixup([]jute.ACL{entry(31, "auth", "")}, ids)
		if err != nil {
			t.Fatal(err)
		}
		var users []string
		for _, a := range got {
			user, _, _ := strings.Cut(a.ID.ID, ":")
			users = append(users, user)
		}
		if strings.Join(users, " ") != tc.want {
			t.Errorf("auth expanded for %s as %v, want %s", tc.added, users, tc.want)
		}
	}
}
