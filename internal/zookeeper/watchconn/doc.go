// Package watchconn is a ZooKeeper client session of its own that holds
// one persistent watch (addWatch, opcode 106: PERSISTENT, or
// PERSISTENT_RECURSIVE for a whole subtree) and hands on every
// notification, in the order the server sent it, with its zxid.
//
// go-zookeeper v1.0.4 cannot send addWatch, so the session speaks the few
// frames it needs itself, with package jute: connect, auth, addWatch,
// ping and closeSession. The web console's live view and zkraft watch
// both use it. The server treats it as any client: notifications are
// filtered by the credentials' READ permission.
//
// A session is not resumed: when the connection ends (the server closed
// it, fell silent for two thirds of the session timeout, or the reader
// fell more than Config.Buffer events behind) the events channel closes
// and the caller opens a new session, reading what changed meanwhile
// itself. Nothing is dropped while the channel is open.
package watchconn
