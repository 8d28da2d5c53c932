// Package zkdata reads Apache ZooKeeper's data directory: its snapshots
// (snapshot.<zxid>, the DataTree as FileSnap serializes it) and its
// transaction logs (log.<zxid>, FileTxnLog's records), so that a
// ZooKeeper ensemble's state can be carried over to zkraft. It only reads;
// it knows nothing of zkraft's tree.
package zkdata
