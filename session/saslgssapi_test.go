package session

import (
	"testing"
	"time"

	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/types"
)

// TestGSSAPIIdentity: the sasl identity of a Kerberos principal, as
// ZooKeeper's SaslServerCallbackHandler makes it with and without
// kerberos.removeHostFromPrincipal and kerberos.removeRealmFromPrincipal.
func TestGSSAPIIdentity(t *testing.T) {
	for _, c := range []struct {
		peer                    string
		removeHost, removeRealm bool
		want                    string
	}{
		{"client@R.TEST", false, false, "client@R.TEST"},
		{"svc/host@R.TEST", false, false, "svc/host@R.TEST"},
		{"svc/host@R.TEST", true, false, "svc@R.TEST"},
		{"svc/host@R.TEST", false, true, "svc/host"},
		{"svc/host@R.TEST", true, true, "svc"},
		{"svc/host@OTHER.TEST", true, true, "svc/host@OTHER.TEST"}, // another realm: no rule applies
	} {
		g := &gssapiServer{krb: &Kerberos{Principal: "zookeeper/h@R.TEST", RemoveHost: c.removeHost, RemoveRealm: c.removeRealm}, peer: c.peer}
		if got := g.identity(); got != c.want {
			t.Errorf("%s (removeHost %v, removeRealm %v) = %q, want %q", c.peer, c.removeHost, c.removeRealm, got, c.want)
		}
	}
}

// FuzzGSSAPI feeds arbitrary client tokens to every step of the server's
// GSSAPI exchange: it never panics and never authenticates without a
// valid AP-REQ.
func FuzzGSSAPI(f *testing.F) {
	kt := keytab.New()
	if err := kt.AddEntry("zookeeper/localhost", "R.TEST", "secret", time.Now(), 1, etypeID.AES128_CTS_HMAC_SHA1_96); err != nil {
		f.Fatal(err)
	}
	krb := &Kerberos{Keytab: kt, Principal: "zookeeper/localhost@R.TEST"}
	f.Add([]byte{0x60, 0x05, 0x06, 0x09, 0x2a})
	f.Add([]byte{0x05, 0x04, 0x00, 0xff, 0x00, 0x0c, 0x00, 0x03, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, token []byte) {
		g := &gssapiServer{krb: krb}
		if _, done, err := g.next(token); done || err == nil {
			t.Fatalf("an arbitrary first token was accepted (done %v)", done)
		}
		// The later steps, as if a context were established.
		g = &gssapiServer{krb: krb, step: 2, key: types.EncryptionKey{KeyType: etypeID.AES128_CTS_HMAC_SHA1_96, KeyValue: make([]byte, 16)}}
		_, _, _ = g.next(token)
		_, _ = unwrapInitiator(token, g.key)
	})
}
