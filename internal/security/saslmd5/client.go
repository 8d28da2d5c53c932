package saslmd5

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Client is the client side of one DIGEST-MD5 exchange, as Java's
// DigestMD5Client runs it (qop=auth, no authorization id): it has no
// initial response, answers the server's challenge with Respond and
// checks the server's rspauth with Verify.
type Client struct {
	// User and Password are the credentials (a JAAS DigestLoginModule's
	// username and password).
	User, Password string
	// DigestURI is protocol/server name ("zookeeper-quorum/zk-quorum-sasl-md5").
	DigestURI string

	ha1, nonce, cnonce string
	step               int
}

// Respond evaluates the server's challenge and returns the digest
// response. Every failure wraps ErrAuth.
func (c *Client) Respond(challenge []byte) ([]byte, error) {
	if c.step != 0 {
		return nil, fmt.Errorf("%w: a second challenge", ErrAuth)
	}
	c.step = 1
	f, err := ParseDirectives(string(challenge))
	if err != nil {
		return nil, err
	}
	c.nonce = f["nonce"]
	switch {
	case c.nonce == "":
		return nil, fmt.Errorf("%w: the challenge has no nonce", ErrAuth)
	case !strings.EqualFold(f["algorithm"], "md5-sess"):
		return nil, fmt.Errorf("%w: algorithm %q, want md5-sess", ErrAuth, f["algorithm"])
	case f["qop"] != "" && !slices.Contains(splitList(f["qop"]), "auth"):
		return nil, fmt.Errorf("%w: the server offers qop %q, not auth", ErrAuth, f["qop"])
	}
	// realm: the one offered (Java's servers offer one), else none.
	realm, utf := f["realm"], strings.EqualFold(f["charset"], "utf-8")
	secret := []byte(c.User + ":" + realm + ":" + c.Password)
	if !utf {
		// Without charset=utf-8 the secret is ISO 8859-1 (RFC 2831 2.1.2.1).
		if latin, ok := latin1(string(secret)); ok {
			secret = latin
		}
	}
	if c.cnonce == "" { // preset only by tests
		var b [24]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("sasl: cnonce: %w", err)
		}
		c.cnonce = base64.StdEncoding.EncodeToString(b[:])
	}
	c.ha1 = ha1(secret, c.nonce, c.cnonce, "")
	var rsp strings.Builder
	if utf {
		rsp.WriteString("charset=utf-8,")
	}
	fmt.Fprintf(&rsp, "username=%s,", quote(c.User))
	if realm != "" {
		fmt.Fprintf(&rsp, "realm=%s,", quote(realm))
	}
	fmt.Fprintf(&rsp, "nonce=%s,nc=%s,cnonce=%s,digest-uri=%s,maxbuf=65536,response=%s,qop=auth",
		quote(c.nonce), nonceCount, quote(c.cnonce), quote(c.DigestURI),
		response(c.ha1, "AUTHENTICATE", c.nonce, nonceCount, c.cnonce, "auth", c.DigestURI))
	return []byte(rsp.String()), nil
}

// Verify checks the server's final token, rspauth=<digest>: the server
// proves it knows the password too.
func (c *Client) Verify(token []byte) error {
	if c.step != 1 {
		return fmt.Errorf("%w: rspauth before the challenge or twice", ErrAuth)
	}
	c.step = 2
	f, err := ParseDirectives(string(token))
	if err != nil {
		return err
	}
	want := response(c.ha1, "", c.nonce, nonceCount, c.cnonce, "auth", c.DigestURI)
	if subtle.ConstantTimeCompare([]byte(want), []byte(strings.ToLower(f["rspauth"]))) != 1 {
		return fmt.Errorf("%w: the server's rspauth %q is wrong", ErrAuth, f["rspauth"])
	}
	return nil
}

// splitList splits a directive's comma-separated value.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		out = append(out, strings.ToLower(strings.TrimSpace(s)))
	}
	return out
}

// latin1 is s in ISO 8859-1, if every rune of it has a code there.
func latin1(s string) ([]byte, bool) {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xff || r == utf8.RuneError {
			return nil, false
		}
		out = append(out, byte(r))
	}
	return out, true
}
