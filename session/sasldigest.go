package session

import (
	"github.com/zkraft/zkraft/internal/security/saslmd5"
)

// ZooKeeper's DIGEST-MD5 server name and protocol: the realm it offers
// and the digest-uri its clients send ("zookeeper/zk-sasl-md5").
const (
	saslRealm     = "zk-sasl-md5"
	saslDigestURI = "zookeeper/" + saslRealm
)

// errSASL is a failed SASL exchange: the client is answered AuthFailed.
var errSASL = saslmd5.ErrAuth

// digestMD5 is the server side of one connection's SASL DIGEST-MD5
// exchange (internal/security/saslmd5), as ZooKeeper runs it with Java's
// DigestMD5Server and the users of its JAAS "Server" section: an empty
// first token is answered with a challenge, the client's digest response
// with rspauth, and the client is then authenticated as its user name.
type digestMD5 struct {
	users map[string]string
	srv   *saslmd5.Server
	user  string // the authenticated user once complete
}

// next evaluates a client token and returns the server's token; done is
// set when the client is authenticated.
func (d *digestMD5) next(token []byte) (resp []byte, done bool, err error) {
	if d.srv == nil {
		d.srv = &saslmd5.Server{Realm: saslRealm, DigestURI: saslDigestURI, Users: d.users}
	}
	resp, done, err = d.srv.Next(token)
	if done {
		d.user = d.srv.User()
	}
	return resp, done, err
}
