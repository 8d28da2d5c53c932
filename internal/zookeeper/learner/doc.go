// Package learner follows a running Apache ZooKeeper ensemble the way a
// ZooKeeper Observer does: it connects to the leader's quorum port, speaks
// the learner side of ZooKeeper's Zab protocol (OBSERVERINFO, LEADERINFO,
// ACKEPOCH; a DIFF, TRUNC or SNAP sync; NEWLEADER, UPTODATE) and then
// applies the leader's INFORM stream of committed transactions to a zkraft
// tree (internal/zookeeper/importer's Follower), each at its ZooKeeper zxid and time,
// so every znode's data and Stat equal ZooKeeper's. It answers the
// leader's PINGs. It takes no part in votes, and needs no Raft.
package learner
