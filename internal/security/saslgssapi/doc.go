// Package saslgssapi is the client (initiator) side of SASL GSSAPI
// (RFC 4752) over Kerberos V5 (RFC 4121), as Java's GssKrb5Client speaks
// it for ZooKeeper: an AP-REQ with mutual authentication, the check of
// the server's AP-REP, then the security-layer negotiation, in which the
// client always chooses no security layer (ZooKeeper's qop is auth).
//
// The server side for ZooKeeper clients is in package session; this
// side is what a quorum learner needs to authenticate to a Kerberized
// ZooKeeper leader (internal/zookeeper/learner).
package saslgssapi
