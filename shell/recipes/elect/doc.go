// Package elect is ZooKeeper's leader election recipe as "zkraft elect"
// runs it, on a path that Apache Curator's LeaderLatch and kazoo's
// Election take part in.
//
// Every candidate creates an EPHEMERAL_SEQUENTIAL child of the election
// path holding its proposal (the participant id); the candidate whose
// child has the lowest sequence number leads, and each other one watches
// only the candidate just before it. This is the lock recipe of package
// lock with other node names and data: Curator's LeaderLatch names its
// children "_c_<uuid>-latch-NNNNNNNNNN", kazoo's Election (a kazoo Lock
// with the identifier as data) "<uuid>__lock__NNNNNNNNNN"; both kinds
// are ordered by their sequence suffix. A campaigner names its own node
// as LeaderLatch does, so that Curator sees it, or as kazoo does (kazoo's
// Election does not see LeaderLatch's names), as Options.Kazoo says.
package elect
