// Package lock is ZooKeeper's lock recipe as "zkraft lock" runs it: a
// mutual-exclusion lock on a path that Apache Curator's InterProcessMutex
// and kazoo's Lock take part in.
//
// Every contender creates an EPHEMERAL_SEQUENTIAL child of the lock path;
// the contender whose child has the lowest sequence number holds the lock,
// and each other one watches only the contender just before it (the
// herd-free recipe of the ZooKeeper documentation). Curator names its
// children "_c_<uuid>-lock-NNNNNNNNNN" and kazoo "<uuid>__lock__NNNNNNNNNN";
// this package orders both by the sequence suffix and creates its own child
// in Curator's protected form, so that Curator, and kazoo given
// extra_lock_patterns=["-lock-"], see it as a contender.
//
// The fencing token of a holder is its child's czxid, the zxid of the
// transaction that created it. Holders acquire in the order of their
// children's creation, and zxids only grow (in zkraft the zxid is the Raft
// log index, which grows across leaders, failovers and restarts), so each
// holder's token is larger than every earlier holder's.
package lock
