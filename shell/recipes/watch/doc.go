// Package watch is "zkraft watch": it prints every change under a znode
// path, with its zxid, the way etcdctl watch prints a key's revisions.
//
// The watcher holds one ZooKeeper persistent watch on the path
// (addWatch PERSISTENT, or PERSISTENT_RECURSIVE with --recursive) on a
// session of its own (package internal/zookeeper/watchconn, which the
// web console uses too): the server notifies every change after the
// watch is set, in zxid order, and nothing is re-armed, so no change is
// coalesced or missed while the session lasts. Each notification is
// printed as it comes, with the zxid its frame carries; with -o json the
// node's data is read on a go-zookeeper session (the one the watcher
// uses for reads), and printed only when it is the data of that change.
//
// The watcher also keeps what it last saw of every followed node (path
// -> czxid, mzxid, pzxid). When the watch session ends (the member went
// away, fell silent, or the watcher fell behind) it opens a new one on
// the next member of the --server list, sets the watch again, re-reads
// the followed tree and prints what changed while it was away, in zxid
// order and marked as such. The re-read keeps out what happened after the
// new watch was set (the zxid its addWatch reply carries), since the new
// watch notifies that.
package watch
