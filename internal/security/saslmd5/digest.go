package saslmd5

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// ErrAuth is a failed DIGEST-MD5 exchange, on either side.
var ErrAuth = errors.New("sasl: DIGEST-MD5 authentication failed")

// nonceCount is the only nc either side uses: one authentication per
// exchange, no re-authentication.
const nonceCount = "00000001"

// ha1 is RFC 2831's HEX(H(A1)) for md5-sess: H(user:realm:password),
// then the nonces and the authorization id. secret is
// user:realm:password in the charset the exchange agreed on.
func ha1(secret []byte, nonce, cnonce, authzid string) string {
	inner := md5.Sum(secret)
	a1 := string(inner[:]) + ":" + nonce + ":" + cnonce
	if authzid != "" {
		a1 += ":" + authzid
	}
	return md5Hex(a1)
}

// response is the digest the client sends (A2 = "AUTHENTICATE:uri"); with
// a2Prefix "" it is the server's rspauth (A2 = ":uri").
func response(ha1, a2Prefix, nonce, nc, cnonce, qop, digestURI string) string {
	return md5Hex(ha1 + ":" + nonce + ":" + nc + ":" + cnonce + ":" + qop + ":" + md5Hex(a2Prefix+":"+digestURI))
}

func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// ParseDirectives splits a digest challenge or response into its
// name=value directives (names lower-cased, values quoted or not,
// backslash escapes in quotes). A repeated directive is an error.
func ParseDirectives(s string) (map[string]string, error) {
	out := map[string]string{}
	for i := 0; i < len(s); {
		for i < len(s) && (s[i] == ',' || s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) {
			break
		}
		eq := strings.IndexByte(s[i:], '=')
		if eq <= 0 {
			return nil, fmt.Errorf("%w: malformed directive at %q", ErrAuth, s[i:])
		}
		name := strings.ToLower(strings.TrimSpace(s[i : i+eq]))
		i += eq + 1
		var val strings.Builder
		if i < len(s) && s[i] == '"' {
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				val.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("%w: unterminated quote", ErrAuth)
			}
			i++
		} else {
			end := strings.IndexByte(s[i:], ',')
			if end < 0 {
				end = len(s) - i
			}
			val.WriteString(strings.TrimSpace(s[i : i+end]))
			i += end
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("%w: directive %s repeated", ErrAuth, name)
		}
		out[name] = val.String()
	}
	return out, nil
}

// quote is s as a quoted-string (RFC 2831): " and \ escaped.
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
