// Package acl implements ZooKeeper's access-control schemes (world, auth,
// digest, ip, super), permission checks and the ACL fix-up done on create and
// setACL. It mirrors ZooKeeper 3.9's ZooKeeperServer.checkACL,
// PrepRequestProcessor.fixupACL and the server authentication providers.
//
// Identities ([]jute.Id) are what a connection has proven: "ip:<addr>" always,
// "digest:user:hash" per successful digest auth and "super:" for the super user.
package acl
