// Package snapfile is the file `zkraft snapshot save` writes and `zkraft
// snapshot restore` and `inspect` read: a member's tree as the
// AdminServer's snapshot command sends it (an Apache ZooKeeper snapshot,
// sealed with its Adler-32), wrapped so that the file says what it holds
// and shows any damage:
//
//	"ZKRSNAP1"                  8 bytes
//	ZooKeeper snapshot          Meta.SnapshotBytes bytes
//	Meta as JSON                n bytes
//	n                           4 bytes, big endian
//	SHA-256 of all of the above 32 bytes
//
// The digest comes last so the file is written in one pass while the
// snapshot arrives (etcd's snapshot db carries its SHA-256 the same way).
// Reading checks the digest, the lengths, the ZooKeeper seal and the
// counts Meta states, and refuses the file naming what is wrong
// (errors.Is(err, ErrCorrupt)). A plain ZooKeeper snapshot file
// (snapshot.<zxid>, .gz or .snappy too) is read as well, for inspect.
package snapfile
