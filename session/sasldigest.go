package session

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// ZooKeeper's DIGEST-MD5 server name and protocol: the realm it offers
// and the digest-uri its clients send ("zookeeper/zk-sasl-md5").
const (
	saslRealm     = "zk-sasl-md5"
	saslDigestURI = "zookeeper/" + saslRealm
)

// errSASL is a failed SASL exchange: the client is answered AuthFailed.
var errSASL = errors.New("sasl: DIGEST-MD5 authentication failed")

// digestMD5 is the server side of one connection's SASL DIGEST-MD5
// exchange (RFC 2831, qop=auth), as ZooKeeper runs it with Java's
// DigestMD5Server and the users of its JAAS "Server" section: an empty
// first token is answered with a challenge, the client's digest response
// with rspauth, and the client is then authenticated as its user name.
type digestMD5 struct {
	users map[string]string
	nonce string
	step  int
	user  string // the authenticated user once complete
}

// next evaluates a client token and returns the server's token; done is
// set when the client is authenticated.
func (d *digestMD5) next(token []byte) (resp []byte, done bool, err error) {
	switch d.step {
	case 0:
		if len(token) != 0 {
			return nil, false, fmt.Errorf("%w: DIGEST-MD5 has no initial response", errSASL)
		}
		var b [24]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, false, fmt.Errorf("sasl: nonce: %w", err)
		}
		d.nonce = base64.StdEncoding.EncodeToString(b[:])
		d.step = 1
		return []byte(`realm="` + saslRealm + `",nonce="` + d.nonce + `",qop="auth",charset=utf-8,algorithm=md5-sess`), false, nil
	case 1:
		d.step = 2
		rsp, err := d.verify(token)
		return rsp, err == nil, err
	}
	return nil, false, fmt.Errorf("%w: exchange already over", errSASL)
}

// verify checks the client's digest response and returns rspauth.
func (d *digestMD5) verify(token []byte) ([]byte, error) {
	f, err := parseDirectives(string(token))
	if err != nil {
		return nil, err
	}
	user, nc, cnonce := f["username"], f["nc"], f["cnonce"]
	qop := f["qop"]
	if qop == "" {
		qop = "auth"
	}
	switch {
	case user == "" || cnonce == "":
		return nil, fmt.Errorf("%w: username and cnonce are required", errSASL)
	case f["nonce"] != d.nonce:
		return nil, fmt.Errorf("%w: nonce mismatch", errSASL)
	case nc != "00000001":
		return nil, fmt.Errorf("%w: nonce count %q", errSASL, nc)
	case qop != "auth":
		return nil, fmt.Errorf("%w: qop %q (only auth is offered)", errSASL, qop)
	case f["digest-uri"] != saslDigestURI:
		return nil, fmt.Errorf("%w: digest-uri %q", errSASL, f["digest-uri"])
	case f["realm"] != "" && f["realm"] != saslRealm:
		return nil, fmt.Errorf("%w: realm %q", errSASL, f["realm"])
	}
	password, ok := d.users[user]
	if !ok {
		return nil, fmt.Errorf("%w: unknown user %q", errSASL, user)
	}
	realm := f["realm"]
	inner := md5.Sum([]byte(user + ":" + realm + ":" + password))
	a1 := string(inner[:]) + ":" + d.nonce + ":" + cnonce
	if z := f["authzid"]; z != "" {
		a1 += ":" + z
	}
	ha1 := md5Hex(a1)
	want := md5Hex(ha1 + ":" + d.nonce + ":" + nc + ":" + cnonce + ":" + qop + ":" + md5Hex("AUTHENTICATE:"+saslDigestURI))
	if subtle.ConstantTimeCompare([]byte(want), []byte(strings.ToLower(f["response"]))) != 1 {
		return nil, fmt.Errorf("%w: wrong password for %q", errSASL, user)
	}
	d.user = user
	rspauth := md5Hex(ha1 + ":" + d.nonce + ":" + nc + ":" + cnonce + ":" + qop + ":" + md5Hex(":"+saslDigestURI))
	return []byte("rspauth=" + rspauth), nil
}

func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// parseDirectives splits a digest response into its name=value
// directives (values quoted or not, backslash escapes in quotes).
func parseDirectives(s string) (map[string]string, error) {
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
			return nil, fmt.Errorf("%w: malformed directive at %q", errSASL, s[i:])
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
				return nil, fmt.Errorf("%w: unterminated quote", errSASL)
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
			return nil, fmt.Errorf("%w: directive %s repeated", errSASL, name)
		}
		out[name] = val.String()
	}
	return out, nil
}
