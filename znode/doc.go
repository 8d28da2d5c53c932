// Package znode is zkraft's deterministic data tree and replicated session
// table: the state machine behind the Raft log.
//
// Apply turns a Txn (a client write plus the caller's session, identities and
// the proposer's clock) into a Result carrying the reply code, the reply body
// and the watch events in the order ZooKeeper fires them. Every check that
// ZooKeeper's PrepRequestProcessor does before logging a transaction is done
// here at apply time, in the same order, so every member decides identically.
// Reads (Exists, GetData, ...) answer from the local tree. WriteSnapshot and
// ReadSnapshot round-trip the whole state exactly.
//
// A Tree is not safe for concurrent use: callers serialize Apply against reads.
package znode
