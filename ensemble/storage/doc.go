// Package storage keeps a member's replicated log and snapshots on disk:
// the append journal (raft.journal) in front of the packed raft-boltdb log
// (raft.db), the asynchronous writer and the byte-bounded cache Raft
// reads through, and the ordered file snapshot store. The ensemble
// package wires them under hashicorp/raft; nothing else imports them.
//
// The layers own these durability rules, and every change to them must
// keep them (the conformance and fault-injection tests check each one):
//
//  1. No reply before the entry is durable. An append is reported stored
//     (Journal.StoreLogs returns nil, AsyncLogStore.DurableIndex passes it,
//     WaitApplicable releases it) only after the write and its fdatasync
//     succeeded. A failed, short or unsynced write is never counted.
//  2. A storage error stops the member. A failed write or sync is returned
//     as an error, and a background one is passed to the fail callback the
//     member gave (ensemble's Node.fatal), which stops it taking writes and
//     exits without acknowledging anything after it. A failed fsync is never
//     retried: the page cache may have dropped the data.
//  3. Everything read back is checksummed: each journal record and header
//     (CRC-32C), each log pack stored in bolt (CRC-32C, checked on every
//     read, a mismatch names the entry's index) and each snapshot (CRC-64
//     of its state, checked when it is opened).
//  4. A corrupt file refuses start with a message naming the file and the
//     byte offset (or snapshot) that is bad. Only a torn tail, a bad last
//     record of the journal with nothing valid after it, is cut, and that
//     is logged. A bad record followed by valid ones is damage in the
//     middle: the member refuses to start rather than drop acknowledged
//     writes. `zkraft rejoin` moves the damaged files aside so the member
//     rejoins from its peers.
package storage
