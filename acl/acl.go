package acl

import (
	"crypto/sha1"
	"encoding/base64"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/zkraft/zkraft/jute"
)

// Scheme names.
const (
	SchemeWorld  = "world"
	SchemeAuth   = "auth"
	SchemeDigest = "digest"
	SchemeIP     = "ip"
	SchemeSuper  = "super"
	// SchemeX509 is a TLS client certificate's subject (the secure client
	// port's identities).
	SchemeX509 = "x509"
	// SchemeSASL is a SASL-authenticated user name.
	SchemeSASL = "sasl"
)

// Predefined ACL lists (ZooDefs.Ids).
var (
	// AnyoneID is the world:anyone identity.
	AnyoneID = jute.Id{Scheme: SchemeWorld, ID: "anyone"}
	// OpenACLUnsafe grants every permission to anyone.
	OpenACLUnsafe = []jute.ACL{{Perms: jute.PermAll, ID: AnyoneID}}
	// ReadACLUnsafe grants READ to anyone.
	ReadACLUnsafe = []jute.ACL{{Perms: jute.PermRead, ID: AnyoneID}}
)

// Check reports whether ids hold perm under list, as ZooKeeper's checkACL: an
// empty list allows everything, a "super" identity passes every check, and an
// entry grants perm if any of perm's bits is in its Perms and its identity
// matches one of ids (world:anyone matches everybody).
func Check(list []jute.ACL, perm int32, ids []jute.Id) bool {
	if len(list) == 0 {
		return true
	}
	for _, id := range ids {
		if id.Scheme == SchemeSuper {
			return true
		}
	}
	for _, a := range list {
		if a.Perms&perm == 0 {
			continue
		}
		if a.ID.Scheme == SchemeWorld && a.ID.ID == "anyone" {
			return true
		}
		for _, id := range ids {
			if id.Scheme == a.ID.Scheme && matches(a.ID.Scheme, id.ID, a.ID.ID) {
				return true
			}
		}
	}
	return false
}

// Granted returns the union of the permissions list grants to ids, each
// bit decided as Check decides it: PermAll for an empty list or a super
// identity. A caller needing several permissions at once (ZooKeeper's
// checkACL with Perms.ALL passes on any one of them) tests the result.
func Granted(list []jute.ACL, ids []jute.Id) int32 {
	var perms int32
	for bit := int32(1); bit <= jute.PermAll; bit <<= 1 {
		if Check(list, bit, ids) {
			perms |= bit
		}
	}
	return perms
}

// matches applies a scheme's provider matching rule. Schemes without a
// server provider (world with another id, auth, super) never match.
func matches(scheme, id, expr string) bool {
	switch scheme {
	case SchemeDigest, SchemeX509, SchemeSASL:
		return id == expr
	case SchemeIP:
		return MatchIP(expr, id)
	}
	return false
}

// authenticated reports whether a scheme's provider counts as authenticated
// for "auth" expansion (isAuthenticated): digest, x509 and sasl do, ip
// does not, and schemes with no provider (super, world) are skipped.
func authenticated(scheme string) bool {
	return scheme == SchemeDigest || scheme == SchemeX509 || scheme == SchemeSASL
}

// Fixup is ZooKeeper's fixupACL for create or setACL: it validates list
// as Validate does, removes exact duplicates (keeping first occurrences)
// and expands each "auth" entry into one entry per authenticated identity
// of the caller, in the order ZooKeeper's identity set iterates them
// (IdentityOrder; ids are given in the order they were added). It fails with jute.ErrInvalidACL exactly when Validate
// does. Perms are not validated, as in ZooKeeper. list is not modified;
// when it needs no change (no duplicate, no "auth" entry: the common case)
// it is returned itself. It costs O(len(list)) (duplicates are found with
// a hash set; ZooKeeper's scan is quadratic, but runs once on the leader,
// where a log replays it on every restart).
func Fixup(list []jute.ACL, ids []jute.Id) ([]jute.ACL, error) {
	if err := Validate(list, ids); err != nil {
		return nil, err
	}
	hasAuth := false
	for _, a := range list {
		if a.ID.Scheme == SchemeAuth {
			hasAuth = true
			break
		}
	}
	if !hasAuth && !hasDuplicate(list) {
		return list, nil
	}
	uniq := dedupe(list)
	out := make([]jute.ACL, 0, len(uniq))
	var ordered []jute.Id // ids as ZooKeeper iterates them (IdentityOrder)
	for _, a := range uniq {
		if a.ID.Scheme != SchemeAuth {
			out = append(out, a)
			continue
		}
		if ordered == nil {
			ordered = IdentityOrder(ids)
		}
		for _, id := range ordered {
			if authenticated(id.Scheme) {
				out = append(out, jute.ACL{Perms: a.Perms, ID: id})
			}
		}
	}
	return out, nil
}

// Validate reports jute.ErrInvalidACL when fixupACL would reject list
// for a caller holding ids: an empty list, an entry of an unknown scheme
// or with a malformed id, or an "auth" entry when the caller has no
// authenticated identity. Duplicates never change the answer, so it needs
// no duplicate check: one pass, O(len(list)), allocating nothing for the
// usual schemes. A write can validate here, at ZooKeeper's point in its
// order of checks, and leave Fixup's copying until its cheaper checks
// have passed.
func Validate(list []jute.ACL, ids []jute.Id) error {
	if len(list) == 0 {
		return jute.ErrInvalidACL
	}
	authOK := -1 // unknown until an "auth" entry asks
	for _, a := range list {
		if a.ID.Scheme != SchemeAuth {
			if !validEntry(a) {
				return jute.ErrInvalidACL
			}
			continue
		}
		if authOK < 0 {
			authOK = 0
			for _, id := range ids {
				if authenticated(id.Scheme) {
					authOK = 1
					break
				}
			}
		}
		if authOK == 0 {
			return jute.ErrInvalidACL
		}
	}
	return nil
}

// smallList is the longest list whose duplicates are found by scanning
// rather than with a hash set.
const smallList = 8

// hasDuplicate reports an entry that occurs twice in list.
func hasDuplicate(list []jute.ACL) bool {
	if len(list) <= smallList {
		for i, a := range list {
			if slices.Contains(list[:i], a) {
				return true
			}
		}
		return false
	}
	seen := make(map[jute.ACL]struct{}, len(list))
	for _, a := range list {
		if _, ok := seen[a]; ok {
			return true
		}
		seen[a] = struct{}{}
	}
	return false
}

// validEntry reports whether an entry of a scheme other than "auth" is
// well formed.
func validEntry(a jute.ACL) bool {
	switch a.ID.Scheme {
	case SchemeWorld:
		return a.ID.ID == "anyone"
	case SchemeDigest:
		return validDigest(a.ID.ID)
	case SchemeIP:
		return ValidIP(a.ID.ID)
	case SchemeX509:
		return ValidDN(a.ID.ID)
	case SchemeSASL:
		return validKerberosName.MatchString(a.ID.ID)
	}
	return false
}

// dedupe returns list without repeated entries, first occurrences kept.
func dedupe(list []jute.ACL) []jute.ACL {
	out := make([]jute.ACL, 0, len(list))
	if len(list) <= smallList {
		for _, a := range list {
			if !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
		return out
	}
	seen := make(map[jute.ACL]struct{}, len(list))
	for _, a := range list {
		if _, ok := seen[a]; !ok {
			seen[a] = struct{}{}
			out = append(out, a)
		}
	}
	return out
}

// validKerberosName is SASLAuthenticationProvider.isValid: a Kerberos
// principal's syntax, user[/host][@REALM].
var validKerberosName = regexp.MustCompile(`^[^/@]+(/[^/@]+)?(@[^/@]+)?$`)

// validDigest is DigestAuthenticationProvider.isValid: Java's
// id.split(":") must yield exactly two parts (trailing empty parts dropped).
func validDigest(id string) bool {
	// Dropping trailing empty parts is dropping trailing colons.
	return strings.Count(strings.TrimRight(id, ":"), ":") == 1
}

// DigestID returns the digest identity for user and password:
// "user:" + base64(sha1("user:password")).
func DigestID(user, password string) string {
	sum := sha1.Sum([]byte(user + ":" + password))
	return user + ":" + base64.StdEncoding.EncodeToString(sum[:])
}

// DigestFromAuth is DigestAuthenticationProvider.generateDigest: the
// identity a digest auth packet's "user:password" proves. The user is the
// text before the first colon (all of it when there is none) and the hash
// covers the whole credential; it never fails, as in ZooKeeper.
func DigestFromAuth(auth string) string {
	user, _, _ := strings.Cut(auth, ":")
	sum := sha1.Sum([]byte(auth))
	return user + ":" + base64.StdEncoding.EncodeToString(sum[:])
}

// maskDigest is Java's id.replaceAll(":.*", ":x"): on each line, everything
// from the first colon on becomes ":x" ('.' stops at line terminators).
func maskDigest(id string) string {
	var b strings.Builder
	for {
		i := strings.IndexFunc(id, isLineTerminator)
		line, rest := id, ""
		if i >= 0 {
			line, rest = id[:i], id[i:]
		}
		if user, _, ok := strings.Cut(line, ":"); ok {
			line = user + ":x"
		}
		b.WriteString(line)
		if i < 0 {
			return b.String()
		}
		_, size := utf8.DecodeRuneInString(rest)
		b.WriteString(rest[:size])
		id = rest[size:]
	}
}

// isLineTerminator reports the characters Java's regex '.' does not match.
func isLineTerminator(r rune) bool {
	return r == '\n' || r == '\r' || r == 0x85 || r == 0x2028 || r == 0x2029
}

// MaskDigests returns list with every digest id rewritten as "user:x", what
// getACL answers a caller without ADMIN. Other entries are unchanged. The
// result is a new slice when anything is masked, otherwise list itself.
func MaskDigests(list []jute.ACL) []jute.ACL {
	var out []jute.ACL
	for i, a := range list {
		if a.ID.Scheme != SchemeDigest {
			continue
		}
		if out == nil {
			out = make([]jute.ACL, len(list))
			copy(out, list)
		}
		out[i].ID.ID = maskDigest(a.ID.ID)
	}
	if out == nil {
		return list
	}
	return out
}
