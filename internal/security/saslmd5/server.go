package saslmd5

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"
)

// Server is the server side of one DIGEST-MD5 exchange, as Java's
// DigestMD5Server runs it for ZooKeeper: an empty first token is answered
// with a challenge (one realm, qop=auth, charset=utf-8, md5-sess), the
// client's digest response with rspauth, and the client is then
// authenticated as its user name.
type Server struct {
	// Realm is the realm offered, the server name (ZooKeeper's
	// "zk-sasl-md5" for clients).
	Realm string
	// DigestURI is the digest-uri clients must send, protocol/server name
	// ("zookeeper/zk-sasl-md5").
	DigestURI string
	// Users are the user names and their passwords.
	Users map[string]string

	nonce string
	step  int
	user  string
}

// Next evaluates a client token and returns the server's token; done is
// set when the client is authenticated. Every failure wraps ErrAuth.
func (s *Server) Next(token []byte) (resp []byte, done bool, err error) {
	switch s.step {
	case 0:
		if len(token) != 0 {
			return nil, false, fmt.Errorf("%w: DIGEST-MD5 has no initial response", ErrAuth)
		}
		var b [24]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, false, fmt.Errorf("sasl: nonce: %w", err)
		}
		s.nonce = base64.StdEncoding.EncodeToString(b[:])
		s.step = 1
		return []byte(`realm=` + quote(s.Realm) + `,nonce="` + s.nonce + `",qop="auth",charset=utf-8,algorithm=md5-sess`), false, nil
	case 1:
		s.step = 2
		rsp, err := s.verify(token)
		return rsp, err == nil, err
	}
	return nil, false, fmt.Errorf("%w: exchange already over", ErrAuth)
}

// User is the authenticated user name, "" until Next returns done.
func (s *Server) User() string { return s.user }

// Nonce is the nonce of the challenge sent, "" before it.
func (s *Server) Nonce() string { return s.nonce }

// verify checks the client's digest response and returns rspauth.
func (s *Server) verify(token []byte) ([]byte, error) {
	f, err := ParseDirectives(string(token))
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
		return nil, fmt.Errorf("%w: username and cnonce are required", ErrAuth)
	case f["nonce"] != s.nonce:
		return nil, fmt.Errorf("%w: nonce mismatch", ErrAuth)
	case nc != nonceCount:
		return nil, fmt.Errorf("%w: nonce count %q", ErrAuth, nc)
	case qop != "auth":
		return nil, fmt.Errorf("%w: qop %q (only auth is offered)", ErrAuth, qop)
	case f["digest-uri"] != s.DigestURI:
		return nil, fmt.Errorf("%w: digest-uri %q", ErrAuth, f["digest-uri"])
	case f["realm"] != "" && f["realm"] != s.Realm:
		return nil, fmt.Errorf("%w: realm %q", ErrAuth, f["realm"])
	}
	password, ok := s.Users[user]
	if !ok {
		return nil, fmt.Errorf("%w: unknown user %q", ErrAuth, user)
	}
	h := ha1([]byte(user+":"+f["realm"]+":"+password), s.nonce, cnonce, f["authzid"])
	want := response(h, "AUTHENTICATE", s.nonce, nc, cnonce, qop, s.DigestURI)
	if subtle.ConstantTimeCompare([]byte(want), []byte(strings.ToLower(f["response"]))) != 1 {
		return nil, fmt.Errorf("%w: wrong password for %q", ErrAuth, user)
	}
	s.user = user
	return []byte("rspauth=" + response(h, "", s.nonce, nc, cnonce, qop, s.DigestURI)), nil
}
