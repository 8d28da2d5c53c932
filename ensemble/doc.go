// Package ensemble owns replication: a hashicorp/raft node over the log,
// stable and snapshot stores of ensemble/storage (which keeps them on disk
// and owns their durability rules), the FSM that applies znode
// transactions, proposals and their completion, leader-side session
// expiry and the container/TTL reaper. It and the packages under it are
// the only ones that import raft.
//
// Every mutation is a Raft log entry. The FSM applies entries in log order
// under the tree's write lock: zxid = the entry's Raft index, times come from
// the proposer's stamp inside the entry, so every member computes the same
// tree. After applying an entry the FSM fires its watch events and then tells
// the local proposer (if any) the result, still under the lock; replies and
// notifications are therefore generated in exactly the order of the tree's
// history.
package ensemble
