// Package datadir reads Apache ZooKeeper's data directory: its snapshots
// (snapshot.<zxid>, the DataTree as FileSnap serializes it, plain, gzip or
// snappy-java compressed) and its transaction logs (log.<zxid>,
// FileTxnLog's records), so that a ZooKeeper ensemble's state can be
// carried over to zkraft; and it writes snapshots in the same format for
// the way back. It knows nothing of zkraft's tree.
package datadir
