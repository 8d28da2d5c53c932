package acl

import (
	"encoding/binary"
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
		n, err := javaParseInt(bitsStr, 10)
		if err != nil || n < 0 || n > len(b)*8 {
			return nil, 0, false
		}
		bits = n
	}
	return b, bits, true
}

// addrBytes parses an address the way ZooKeeper 3.9's
// IPAuthenticationProvider does: a string containing ':' is IPv6 (16 bytes,
// hex segments of at most four digits, at most one "::", no embedded IPv4
// and no zone), otherwise one containing '.' must be four decimal octets.
func addrBytes(s string) ([]byte, bool) {
	switch {
	case strings.Contains(s, ":"):
		return v6Bytes(s)
	case strings.Contains(s, "."):
		return v4Bytes(s)
	}
	return nil, false
}

func v4Bytes(s string) ([]byte, bool) {
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return nil, false
	}
	out := make([]byte, 4)
	for i, p := range parts {
		v, err := javaParseInt(p, 10)
		if err != nil || v < 0 || v > 255 {
			return nil, false
		}
		out[i] = byte(v)
	}
	return out, true
}

func v6Bytes(s string) ([]byte, bool) {
	const segments = 8
	var head, tail []string
	halves := strings.Split(s, "::")
	switch len(halves) {
	case 1:
		head = strings.Split(s, ":")
		if len(head) != segments {
			return nil, false
		}
	case 2:
		if halves[0] != "" {
			head = strings.Split(halves[0], ":")
		}
		if halves[1] != "" {
			tail = strings.Split(halves[1], ":")
		}
		if len(head)+len(tail) >= segments {
			return nil, false
		}
	default:
		return nil, false
	}
	out := make([]byte, 16)
	if !putV6(out[:2*len(head)], head) || !putV6(out[16-2*len(tail):], tail) {
		return nil, false
	}
	return out, true
}

// putV6 writes hex segments (1-4 characters each, Java parseInt radix 16)
// as big-endian 16-bit values.
func putV6(dst []byte, segs []string) bool {
	for i, seg := range segs {
		if seg == "" || len(seg) > 4 {
			return false
		}
		v, err := javaParseInt(seg, 16)
		if err != nil {
			return false
		}
		binary.BigEndian.PutUint16(dst[2*i:], uint16(v))
	}
	return true
}

// javaParseInt accepts what Integer.parseInt accepts for ASCII input: an
// optional sign followed by digits of base.
func javaParseInt(s string, base int) (int, error) {
	n, err := strconv.ParseInt(s, base, 32)
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
