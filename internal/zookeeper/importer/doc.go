// Package importer carries an Apache ZooKeeper data directory over to
// zkraft. It loads ZooKeeper's newest snapshot (internal/zookeeper/datadir) into a
// zkraft tree and replays the transactions logged after it through the
// tree's own Apply, each at its ZooKeeper zxid and time, so every znode
// keeps its data, ACL and Stat. Sessions keep their ids, timeouts and
// ZooKeeper's passwords, so a client that reconnects within its timeout
// resumes its session and keeps its ephemerals.
package importer
