// Package observer serves ZooKeeper clients from a zkraft server that
// follows a running Apache ZooKeeper ensemble as one of its Observers
// (internal/zookeeper/learner): the first step of a live migration.
//
// Its Backend is what package session serves in place of a Raft member:
// reads come from the followed tree, which holds ZooKeeper's data and
// Stats at ZooKeeper's zxids; writes, session creation and syncs are
// forwarded to ZooKeeper's leader as a ZooKeeper Observer forwards them
// (Learner.request), and are answered once the transaction the leader
// made of them is applied here; watches fire from the followed stream;
// a session a client brings from another server is revalidated with the
// leader before its handshake completes, and this server's sessions are
// kept alive in its replies to the leader's pings. Sessions therefore
// move freely between ZooKeeper's servers and zkraft's observers, with
// ZooKeeper's ids and passwords.
package observer
