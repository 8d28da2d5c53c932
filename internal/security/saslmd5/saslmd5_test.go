package saslmd5

import (
	"errors"
	"strings"
	"testing"
)

// TestRFC2831Example: the client computes RFC 2831's worked example
// (section 4, IMAP): its response digest, and it accepts the example's
// rspauth and no other.
func TestRFC2831Example(t *testing.T) {
	challenge := `realm="elwood.innosoft.com",nonce="OA6MG9tEQGm2hh",qop="auth",algorithm=md5-sess,charset=utf-8`
	c := &Client{User: "chris", Password: "secret", DigestURI: "imap/elwood.innosoft.com", cnonce: "OA6MHXh6VqTrRk"}
	rsp, err := c.Respond([]byte(challenge))
	if err != nil {
		t.Fatal(err)
	}
	f, err := ParseDirectives(string(rsp))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"charset": "utf-8", "username": "chris", "realm": "elwood.innosoft.com", "nonce": "OA6MG9tEQGm2hh",
		"nc": "00000001", "cnonce": "OA6MHXh6VqTrRk", "digest-uri": "imap/elwood.innosoft.com",
		"response": "d388dad90d4bbd760a152321f2143af7", "qop": "auth"}
	for k, v := range want {
		if f[k] != v {
			t.Errorf("%s=%q, want %q (response %s)", k, f[k], v, rsp)
		}
	}
	bad := *c
	if err := bad.Verify([]byte("rspauth=" + strings.Repeat("0", 32))); !errors.Is(err, ErrAuth) {
		t.Errorf("a wrong rspauth: %v", err)
	}
	if err := c.Verify([]byte("rspauth=ea40f60335c427b5527b84dbabcdfffd")); err != nil {
		t.Errorf("the example's rspauth: %v", err)
	}
	if err := c.Verify([]byte("rspauth=ea40f60335c427b5527b84dbabcdfffd")); err == nil {
		t.Error("a second rspauth was accepted")
	}
}

// TestClientServer runs Client against Server: the right password
// authenticates both ways (including a user name needing quotes and
// non-ASCII), a wrong one is refused by the server.
func TestClientServer(t *testing.T) {
	users := map[string]string{"learner": "s3cret", `qu"o\te`: "pässwörd"}
	run := func(user, password string) (string, error) {
		s := &Server{Realm: "zk-quorum-sasl-md5", DigestURI: "zookeeper-quorum/zk-quorum-sasl-md5", Users: users}
		c := &Client{User: user, Password: password, DigestURI: s.DigestURI}
		ch, done, err := s.Next(nil)
		if err != nil || done {
			t.Fatalf("challenge: %v %v", done, err)
		}
		rsp, err := c.Respond(ch)
		if err != nil {
			return "", err
		}
		fin, done, err := s.Next(rsp)
		if err != nil {
			return "", err
		}
		if !done {
			t.Fatal("the server is not done after the response")
		}
		return s.User(), c.Verify(fin)
	}
	for u, p := range users {
		if got, err := run(u, p); err != nil || got != u {
			t.Errorf("%s: authenticated as %q, %v", u, got, err)
		}
	}
	if _, err := run("learner", "wrong"); !errors.Is(err, ErrAuth) {
		t.Errorf("a wrong password: %v", err)
	}
}

// TestClientRefusesChallenges: a challenge without a nonce, without
// md5-sess or without qop auth is refused, as is a second one.
func TestClientRefusesChallenges(t *testing.T) {
	for _, ch := range []string{
		`realm="r",qop="auth",algorithm=md5-sess`,
		`realm="r",nonce="n",qop="auth"`,
		`realm="r",nonce="n",qop="auth-int,auth-conf",algorithm=md5-sess`,
		`realm="r`,
	} {
		c := &Client{User: "u", Password: "p", DigestURI: "x/y"}
		if _, err := c.Respond([]byte(ch)); !errors.Is(err, ErrAuth) {
			t.Errorf("challenge %q: %v", ch, err)
		}
	}
	c := &Client{User: "u", Password: "p", DigestURI: "x/y"}
	ok := `nonce="n",qop="auth,auth-int",algorithm=md5-sess`
	if _, err := c.Respond([]byte(ok)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Respond([]byte(ok)); err == nil {
		t.Error("a second challenge was answered")
	}
}

// TestParseDirectivesMalformed: unterminated quotes, empty names,
// repeats and names without values are refused.
func TestParseDirectivesMalformed(t *testing.T) {
	for _, bad := range []string{`username="bob`, `=x`, `a=1,a=2`, `novalue`} {
		if _, err := ParseDirectives(bad); !errors.Is(err, ErrAuth) {
			t.Errorf("ParseDirectives(%q): %v", bad, err)
		}
	}
}
