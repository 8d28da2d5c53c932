// Package watch is "zkraft watch": it prints every change under a znode
// path, with its zxid, the way etcdctl watch prints a key's revisions.
//
// go-zookeeper v1.0.4 cannot send addWatch, so the watcher holds
// ZooKeeper's one-shot watches (an exists watch on every node it follows
// and a children watch on every node it lists) and re-arms each as it
// fires, re-reading the node in the same request. Each event is computed
// by comparing what the server holds with a snapshot of what the watcher
// last saw (path -> czxid, mzxid, children), so a change made between a
// watch firing and its re-arm is not lost: it is reported with the
// re-read (several data changes in that window are reported as one, at
// the last one's zxid).
//
// After the connection drops, or the session expires and a new one is
// made, the watcher re-reads the whole followed tree and reports what
// changed while it was away (created, changed, deleted, in zxid order),
// marked as such: the gap that ZooKeeper's one-shot watches leave open
// across an expiry.
package watch
