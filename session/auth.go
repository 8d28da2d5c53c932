package session

import (
	"crypto/sha1"
	"encoding/base64"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/acl"
	"github.com/zkraft/zkraft/jute"
)

// auth handles an AuthPacket (xid -4). Identities take effect for every
// request read after it; the reply keeps its place in the reply order. A
// failed auth is answered with AuthFailed and the connection is closed, as
// ZooKeeper does.
func (c *conn) auth(xid int32, body []byte) bool {
	var pkt jute.AuthPacket
	if err := jute.Unmarshal(body, &pkt); err != nil {
		return false
	}
	code := jute.OK
	switch {
	case pkt.Scheme == "digest" && pkt.Auth == nil:
		// ZooKeeper's digest provider throws on null auth data (new
		// String(null)), which it answers as AuthFailed; empty data is fine.
		code = jute.ErrAuthFailed
	case pkt.Scheme == "digest":
		for _, id := range c.srv.digestIdentities(string(pkt.Auth)) {
			if !c.addID(id) {
				code = jute.ErrAuthFailed // more identities than a connection may hold
			}
		}
	case pkt.Scheme == "ip":
		if !c.addID(jute.Id{Scheme: "ip", ID: c.remote}) {
			code = jute.ErrAuthFailed
		}
	default:
		code = jute.ErrAuthFailed
	}
	h := jute.RequestHeader{Xid: xid, Type: jute.OpPing}
	if code != jute.OK {
		c.srv.stats.authFailed.Add(1)
		c.logger().Info("auth failed", zap.String("scheme", pkt.Scheme))
		c.inOrder(h, func() {
			c.out.reply(xid, 0, code, nil)
			c.out.closeAfterFlush()
		})
		return false
	}
	c.inOrder(h, func() { c.out.reply(xid, 0, jute.OK, nil) })
	return true
}

// sasl answers a SASL request (opcode 102) as a ZooKeeper server without
// SASL configured does: OK with a null token, zxid 0, the connection kept.
// A Java client with a JAAS "Client" section sends one after connecting;
// closing the connection instead would make it reconnect forever.
func (c *conn) sasl(xid int32, body []byte) bool {
	var req jute.GetSASLRequest
	if err := jute.Unmarshal(body, &req); err != nil {
		return false
	}
	h := jute.RequestHeader{Xid: xid, Type: jute.OpPing}
	if c.saslState == nil {
		switch {
		case c.srv.cfg.Kerberos != nil:
			c.saslState = &gssapiServer{krb: c.srv.cfg.Kerberos}
		case c.srv.cfg.SASLUsers != nil:
			c.saslState = &digestMD5{users: c.srv.cfg.SASLUsers}
		default:
			// No JAAS Server section: ZooKeeper answers an empty token.
			c.inOrder(h, func() { c.out.reply(xid, 0, jute.OK, &jute.SetSASLResponse{}) })
			return true
		}
	}
	token, done, err := c.saslState.next(req.Token)
	if err != nil {
		c.srv.stats.authFailed.Add(1)
		c.logger().Info("SASL authentication failed", zap.Error(err))
		required := slices.Contains(c.srv.cfg.EnforceAuthSchemes, "sasl")
		if c.srv.cfg.AllowSASLFailedClients && !required {
			// allowSaslFailedClients: the connection stays, unauthenticated,
			// answered OK with a null token, as ZooKeeper does.
			c.inOrder(h, func() { c.out.reply(xid, 0, jute.OK, &jute.SetSASLResponse{}) })
			return true
		}
		// ZooKeeper answers AuthFailed (SessionClosedRequireSaslAuth when
		// SASL is enforced) with a null token (the client, still mid-SASL,
		// reads the body as one) and closes the connection.
		code := jute.ErrAuthFailed
		if required {
			code = jute.ErrSessionClosedNoSASL
		}
		c.inOrder(h, func() {
			c.out.replyErrorWithBody(xid, 0, code, &jute.SetSASLResponse{})
			c.out.closeAfterFlush()
		})
		return false
	}
	if done {
		// In ZooKeeper's order (whoAmI lists identities in its hash
		// table's order, ties in insertion order): sasl, then super.
		user := c.saslState.authenticated()
		ok := c.addID(jute.Id{Scheme: "sasl", ID: user})
		if su := c.srv.cfg.SASLSuperUser; ok && su != "" && user == su {
			ok = c.addID(jute.Id{Scheme: "super", ID: ""})
		}
		if !ok {
			c.srv.stats.authFailed.Add(1)
			c.logger().Info("SASL identity over the connection's bounds")
			c.inOrder(h, func() {
				c.out.replyErrorWithBody(xid, 0, jute.ErrAuthFailed, &jute.SetSASLResponse{})
				c.out.closeAfterFlush()
			})
			return false
		}
	}
	c.inOrder(h, func() { c.out.reply(xid, 0, jute.OK, &jute.SetSASLResponse{Token: token}) })
	return true
}

// saslMech is the server side of one SASL mechanism's exchange.
type saslMech interface {
	// next evaluates the client's token and returns the server's; done
	// is set once the client is authenticated.
	next(token []byte) (resp []byte, done bool, err error)
	// authenticated is the client's sasl identity once done.
	authenticated() string
}

func (d *digestMD5) authenticated() string    { return d.user }
func (g *gssapiServer) authenticated() string { return g.user }

// inOrder runs fn now if nothing of this connection is in flight, else
// queues a ping-like placeholder so that fn's reply keeps its place. Used
// for replies that need no tree access.
func (c *conn) inOrder(h jute.RequestHeader, fn func()) {
	c.mu.Lock()
	if n := len(c.pending); n > 0 {
		c.pending[n-1].parked = append(c.pending[n-1].parked, parkedRead{h: h, after: fn})
		c.parked.Add(1)
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	fn()
}

// digestIdentities are the identities "user:password" proves: the super
// user first when it is the configured super digest, then digest:user:hash.
func (s *Server) digestIdentities(auth string) []jute.Id {
	id := digestID(auth)
	if s.cfg.SuperDigest != "" && id == s.cfg.SuperDigest {
		return []jute.Id{{Scheme: "super", ID: ""}, {Scheme: "digest", ID: id}}
	}
	return []jute.Id{{Scheme: "digest", ID: id}}
}

// digestID is ZooKeeper's DigestAuthenticationProvider.generateDigest: the
// user name (up to the first colon) and base64(sha1(whole auth string)).
func digestID(auth string) string {
	user, _, _ := strings.Cut(auth, ":")
	sum := sha1.Sum([]byte(auth))
	return user + ":" + base64.StdEncoding.EncodeToString(sum[:])
}

// whoAmI lists the connection's identities as ZooKeeper's whoAmI does, in
// the order its identity set iterates (see acl.IdentityOrder).
func whoAmI(ids []jute.Id) *jute.WhoAmIResponse {
	out := &jute.WhoAmIResponse{ClientInfo: make([]jute.ClientInfo, 0, len(ids))}
	for _, id := range acl.IdentityOrder(ids) {
		user := id.ID
		if id.Scheme == "digest" {
			user, _, _ = strings.Cut(id.ID, ":")
		}
		out.ClientInfo = append(out.ClientInfo, jute.ClientInfo{AuthScheme: id.Scheme, User: user})
	}
	return out
}
