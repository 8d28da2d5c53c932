package saslmd5

import "testing"

// FuzzClient feeds arbitrary server tokens to the client side (a quorum
// leader's challenge, then its rspauth): it never panics, and no token
// but the server's digest for this exchange's nonces proves the server.
func FuzzClient(f *testing.F) {
	f.Add([]byte(`realm="zk-quorum-sasl-md5",nonce="OA6MG9tEQGm2hh",qop="auth",algorithm=md5-sess,charset=utf-8`),
		[]byte("rspauth=ea40f60335c427b5527b84dbabcdfffd"))
	f.Add([]byte(`nonce=,algorithm="md5-sess",qop="auth-int,auth"`), []byte(`rspauth=`))
	f.Add([]byte(`,,,=,"`), []byte(`rspauth="\"`))
	f.Fuzz(func(t *testing.T, challenge, final []byte) {
		c := &Client{User: "learner", Password: "s3cret", DigestURI: "zookeeper-quorum/zk-quorum-sasl-md5"}
		rsp, err := c.Respond(challenge)
		if err != nil {
			return
		}
		if _, err := ParseDirectives(string(rsp)); err != nil {
			t.Fatalf("the client's own response does not parse: %q: %v", rsp, err)
		}
		// The cnonce is random, so an rspauth fixed by the fuzzer cannot
		// be this exchange's.
		if err := c.Verify(final); err == nil {
			t.Fatalf("rspauth %q accepted for challenge %q", final, challenge)
		}
	})
}
