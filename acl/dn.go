package acl

import "strings"

// ValidDN reports whether id is a distinguished name as Java's
// X500Principal accepts it (X509AuthenticationProvider.isValid): empty,
// or relative names separated by "," or ";", each one or more
// type=value pairs joined by "+", where a type is a keyword ("CN", "OU")
// Java knows (dnKeywords) or an OID, optionally "OID."-prefixed ("2.5.4.3"), and a value may be
// quoted, hex ("#04..."), or use backslash escapes.
func ValidDN(id string) bool {
	if strings.TrimSpace(id) == "" {
		return true
	}
	for _, part := range splitUnescaped(id, ",;+") {
		typ, value, ok := strings.Cut(part, "=")
		if !ok || !validAttrType(strings.TrimSpace(typ)) {
			return false
		}
		value = strings.TrimSpace(value)
		if strings.HasPrefix(value, "\"") && (len(value) < 2 || !strings.HasSuffix(value, "\"")) {
			return false
		}
	}
	return true
}

// splitUnescaped splits s at the separator bytes that are not escaped by a
// backslash or inside double quotes.
func splitUnescaped(s, seps string) []string {
	var parts []string
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && strings.IndexByte(seps, c) >= 0:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

func validAttrType(t string) bool {
	t = strings.TrimPrefix(strings.TrimPrefix(t, "OID."), "oid.")
	if t == "" {
		return false
	}
	if t[0] >= '0' && t[0] <= '9' { // an OID: digits and single dots
		for _, arc := range strings.Split(t, ".") {
			if arc == "" || strings.Trim(arc, "0123456789") != "" {
				return false
			}
		}
		return true
	}
	return dnKeywords[strings.ToUpper(t)]
}

// dnKeywords are the attribute keywords Java's X500Principal parses (its
// RFC 1779, RFC 2253 and extra keywords); others must be given as OIDs.
var dnKeywords = map[string]bool{
	"CN": true, "C": true, "L": true, "S": true, "ST": true, "O": true, "OU": true, "T": true, "IP": true,
	"STREET": true, "DC": true, "DNQUALIFIER": true, "DNQ": true, "SURNAME": true, "GIVENNAME": true,
	"INITIALS": true, "GENERATION": true, "EMAIL": true, "EMAILADDRESS": true, "UID": true, "SERIALNUMBER": true,
}
