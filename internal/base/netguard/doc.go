// Package netguard keeps a listening port from being exhausted, and a
// flood of connections from exhausting the process: a Listener retries
// every accept error (EMFILE, ENFILE, ECONNABORTED, ENOBUFS...) with a
// backoff instead of giving up, caps the connections it holds, in all and
// per source address, and counts what it refuses in Rejections (mntr's
// connection_rejected); RateLog keeps either from becoming a log storm;
// Plan divides the process's file limit between its listeners, keeping a
// reserve for everything else; HTTPTimeouts gives an HTTP server deadlines
// that drop a request whose headers or body never come, an idle
// connection and a client that stopped reading, without cutting a
// response that streams.
//
// It is a leaf: it knows sockets and zap, nothing of ZooKeeper.
package netguard
