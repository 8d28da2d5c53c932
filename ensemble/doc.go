// Package ensemble owns replication: a hashicorp/raft node with a raft-boltdb
// log and stable store and a file snapshot store, the FSM that applies
// znode transactions, proposals and their completion, leader-side session
// expiry and the container/TTL reaper. It is the only package that imports
// raft.
//
// Every mutation is a Raft log entry. The FSM applies entries in log order
// under the tree's write lock: zxid = the entry's Raft index, times come from
// the proposer's stamp inside the entry, so every member computes the same
// tree. After applying an entry the FSM fires its watch events and then tells
// the local proposer (if any) the result, still under the lock; replies and
// notifications are therefore generated in exactly the order of the tree's
// history.
package ensemble
