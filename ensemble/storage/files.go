package storage

// Names of a member's storage files: the bolt store (log and stable
// store) and its write-ahead journal live in the log directory, the
// snapshots in a directory of this name under the data directory.
const (
	// LogStoreFile is the bolt file holding the log and the stable store.
	LogStoreFile = "raft.db"
	// JournalFile is the append journal in front of LogStoreFile.
	JournalFile = "raft.journal"
	// SnapshotsDir is the snapshot store's directory under the data directory.
	SnapshotsDir = "snapshots"
)
