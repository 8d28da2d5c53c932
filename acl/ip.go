package acl

import (
	"net/netip"
	"strconv"
	"strings"
)

// ValidIP reports whether expr is a valid ip-scheme ACL id: an IPv4 or IPv6
// address, optionally followed by "/bits" with 0 <= bits <= address length.
func ValidIP(expr string) bool {
	_, _, ok := parseIPExpr(expr)
	return ok
}

// MatchIP reports whether addr (a caller's "ip" identity) matches the ACL id
// pattern ("addr" or "addr/bits"). Addresses of different families never
// match; an invalid pattern or address matches nothing.
func MatchIP(pattern, addr string) bool {
	want, bits, ok := parseIPExpr(pattern)
	if !ok {
		return false
	}
	got, ok := addrBytes(addr)
	if !ok || len(got) != len(want) {
		return false
	}
	mask(want, bits)
	mask(got, bits)
	return string(want) == string(got)
}

// parseIPExpr splits "addr[/bits]" into the address bytes and prefix length.
func parseIPExpr(expr string) ([]byte, int, bool) {
	addr, bitsStr, hasBits := strings.Cut(expr, "/")
	b, ok := addrBytes(addr)
	if !ok {
		return nil, 0, false
	}
	bits := len(b) * 8
	if hasBits {
		n, err := javaParseInt(bitsStr)
		if err != nil || n < 0 || n > len(b)*8 {
			return nil, 0, false
		}
		bits = n
	}
	return b, bits, true
}

// addrBytes parses an address the way IPAuthenticationProvider does: a
// string containing ':' is IPv6 (16 bytes), anything else must be four
// dotted decimal octets.
func addrBytes(s string) ([]byte, bool) {
	if strings.Contains(s, ":") {
		s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, false
		}
		if a.Is4In6() {
			// Java's InetAddress turns IPv4-mapped literals into IPv4 addresses.
			a4 := a.Unmap().As4()
			return a4[:], true
		}
		a16 := a.As16()
		return a16[:], true
	}
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return nil, false
	}
	out := make([]byte, 4)
	for i, p := range parts {
		v, err := javaParseInt(p)
		if err != nil || v < 0 || v > 255 {
			return nil, false
		}
		out[i] = byte(v)
	}
	return out, true
}

// javaParseInt accepts what Integer.parseInt accepts: an optional sign
// followed by decimal digits.
func javaParseInt(s string) (int, error) {
	if strings.HasPrefix(s, "+") && len(s) > 1 && s[1] != '-' && s[1] != '+' {
		s = s[1:]
	}
	n, err := strconv.ParseInt(s, 10, 32)
	return int(n), err
}

// mask clears every bit of b after the first bits.
func mask(b []byte, bits int) {
	for i := range b {
		switch {
		case bits >= 8:
			bits -= 8
		case bits <= 0:
			b[i] = 0
		default:
			b[i] &= byte(0xff << (8 - bits))
			bits = 0
		}
	}
}
