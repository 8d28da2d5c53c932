package session

import (
	"strings"
	"testing"

	"github.com/zkraft/zkraft/internal/security/saslmd5"
)

// FuzzDigestMD5 feeds arbitrary client tokens to the server side of the
// SASL exchange: it never panics, and nothing but a correct digest for a
// known user authenticates.
func FuzzDigestMD5(f *testing.F) {
	f.Add([]byte(`charset=utf-8,username="bob",realm="zk-sasl-md5",nonce="N",nc=00000001,cnonce="c",digest-uri="zookeeper/zk-sasl-md5",maxbuf=65536,response=0123456789abcdef0123456789abcdef,qop=auth`))
	f.Add([]byte(`username="a\"b",nonce=,nc=1`))
	f.Add([]byte(`,,,=`))
	f.Fuzz(func(t *testing.T, token []byte) {
		d := &digestMD5{users: map[string]string{"bob": "secret"}}
		if _, _, err := d.next(nil); err != nil {
			t.Fatal(err)
		}
		// Whatever nonce the token names, it is not this exchange's (the
		// server's nonce is random), so the response cannot authenticate.
		if _, done, err := d.next(token); done || err == nil {
			if !strings.Contains(string(token), d.srv.Nonce()) {
				t.Fatalf("token %q authenticated", token)
			}
		}
		_, _ = saslmd5.ParseDirectives(string(token))
	})
}
