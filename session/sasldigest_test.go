package session

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/zkraft/zkraft/internal/security/saslmd5"
)

func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// digestClientResponse is a DIGEST-MD5 client's answer to challenge, as
// Java's DigestMD5Client writes it for ZooKeeper (qop=auth, charset=utf-8).
func digestClientResponse(t *testing.T, challenge, user, password, cnonce string, edit func(map[string]string)) []byte {
	t.Helper()
	f, err := saslmd5.ParseDirectives(challenge)
	if err != nil {
		t.Fatal(err)
	}
	d := map[string]string{"username": user, "realm": f["realm"], "nonce": f["nonce"], "nc": "00000001", "cnonce": cnonce,
		"digest-uri": saslDigestURI, "qop": "auth"}
	if edit != nil {
		edit(d)
	}
	inner := md5.Sum([]byte(d["username"] + ":" + d["realm"] + ":" + password))
	ha1 := md5Hex(string(inner[:]) + ":" + d["nonce"] + ":" + d["cnonce"])
	d["response"] = md5Hex(ha1 + ":" + d["nonce"] + ":" + d["nc"] + ":" + d["cnonce"] + ":" + d["qop"] + ":" + md5Hex("AUTHENTICATE:"+d["digest-uri"]))
	if edit != nil {
		edit(d) // a second pass may spoil the response itself
	}
	return []byte(fmt.Sprintf(`charset=utf-8,username="%s",realm="%s",nonce="%s",nc=%s,cnonce="%s",digest-uri="%s",maxbuf=65536,response=%s,qop=%s`,
		d["username"], d["realm"], d["nonce"], d["nc"], d["cnonce"], d["digest-uri"], d["response"], d["qop"]))
}

// TestDigestMD5 runs the server side against a client computed from RFC
// 2831: the right password authenticates the user and yields the rspauth
// the client checks; every spoiled directive fails.
func TestDigestMD5(t *testing.T) {
	users := map[string]string{"bob": "bobsecret", "ünï": "pässwörd"}
	run := func(user, password string, edit func(map[string]string)) (*digestMD5, []byte, error) {
		d := &digestMD5{users: users}
		ch, done, err := d.next(nil)
		if err != nil || done || !strings.Contains(string(ch), `realm="zk-sasl-md5"`) || !strings.Contains(string(ch), "algorithm=md5-sess") {
			t.Fatalf("challenge %q %v %v", ch, done, err)
		}
		rsp, done, err := d.next(digestClientResponse(t, string(ch), user, password, "c0ffee", edit))
		if err == nil && !done {
			t.Fatal("not done after a valid response")
		}
		return d, rsp, err
	}
	for _, u := range []string{"bob", "ünï"} {
		d, rsp, err := run(u, users[u], nil)
		if err != nil || d.user != u || !strings.HasPrefix(string(rsp), "rspauth=") || len(rsp) != len("rspauth=")+32 {
			t.Fatalf("%s: %q %v", u, rsp, err)
		}
		if _, _, err := d.next(nil); err == nil {
			t.Fatal("a third token was accepted")
		}
	}
	for name, edit := range map[string]func(map[string]string){
		"wrong password": nil,
		"unknown user":   func(d map[string]string) { d["username"] = "eve" },
		"stale nonce":    func(d map[string]string) { d["nonce"] = "AAAA" },
		"replayed nc":    func(d map[string]string) { d["nc"] = "00000002" },
		"other service":  func(d map[string]string) { d["digest-uri"] = "ldap/zk-sasl-md5" },
		"other realm":    func(d map[string]string) { d["realm"] = "EXAMPLE.COM" },
		"qop auth-int":   func(d map[string]string) { d["qop"] = "auth-int" },
		"spoiled digest": func(d map[string]string) {
			if d["response"] != "" {
				d["response"] = strings.Repeat("0", 32)
			}
		},
	} {
		password := "bobsecret"
		if name == "wrong password" {
			password = "nope"
		}
		if _, _, err := run("bob", password, edit); !errors.Is(err, errSASL) {
			t.Errorf("%s: %v", name, err)
		}
	}
	d := &digestMD5{users: users}
	if _, _, err := d.next([]byte("x")); err == nil {
		t.Fatal("an initial response was accepted")
	}
}
