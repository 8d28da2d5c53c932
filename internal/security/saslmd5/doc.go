// Package saslmd5 is SASL DIGEST-MD5 (RFC 2831) with qop=auth, as Java's
// DigestMD5Server and DigestMD5Client run it for ZooKeeper: Server
// authenticates zkraft's clients (package session, ZooKeeper's JAAS
// "Server" section), Client authenticates zkraft as a quorum learner to a
// ZooKeeper leader (internal/zookeeper/learner, the "QuorumLearner" section).
// Both compute the digests with the same functions (digest.go).
package saslmd5
