package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"
)

// Recovering a member whose log or snapshots are damaged: the files are
// moved aside (never deleted) and the member starts with an empty log,
// from which its peers bring it up to date (the leader sends it entries
// or a snapshot), as a ZooKeeper member with an emptied dataDir does.
//
// The fresh raft.db keeps the member's current term and vote when the old
// one still reads: a member must not vote twice in a term, and Raft keeps
// both there. Its term also makes Raft see existing state, so the member
// does not bootstrap a configuration of its own: it waits for the leader,
// whose configuration still lists it.

// Keys of Raft's stable store (hashicorp/raft's raft.go).
var (
	keyCurrentTerm  = []byte("CurrentTerm")
	keyLastVoteTerm = []byte("LastVoteTerm")
	keyLastVoteCand = []byte("LastVoteCand")
)

// RejoinResult says what PrepareRejoin did.
type RejoinResult struct {
	// Moved lists each file or directory moved aside, as "from -> to".
	Moved []string
	// Term is the current term written into the fresh raft.db.
	Term uint64
	// VoteKept reports whether the vote of that term was carried over.
	VoteKept bool
	// Warnings are what could not be carried over (the term and vote
	// when the old raft.db does not read).
	Warnings []string

	voteTerm uint64 // the term of the vote carried over
	voteCand []byte // the candidate voted for
}

// PrepareRejoin moves a stopped member's Raft log (raft.db, raft.journal
// in logDir and dataDir) and snapshots (dataDir/snapshots) into a
// directory damaged-<time> beside them and writes a fresh raft.db in
// logDir ("" = dataDir) holding only Raft's term and vote, so that the
// member rejoins its ensemble and catches up from its peers. myid and the
// configuration are not touched. It refuses while raft.db is locked (the
// member is running), when there is nothing to move, and when the files'
// Raft configuration lists this one server alone (standalone: there is no
// peer to catch up from).
func PrepareRejoin(dataDir, logDir string, now time.Time) (*RejoinResult, error) {
	if logDir == "" {
		logDir = dataDir
	}
	stamp := "damaged-" + now.UTC().Format("20060102T150405Z")
	res := &RejoinResult{}
	type move struct{ from, dir string }
	var moves []move
	var oldDB string
	for _, dir := range uniqueDirs(logDir, dataDir) {
		for _, name := range []string{LogStoreFile, JournalFile} {
			p := filepath.Join(dir, name)
			if _, err := os.Stat(p); err == nil {
				moves = append(moves, move{p, dir})
				if name == LogStoreFile && (oldDB == "" || dir == logDir) {
					oldDB = p
				}
			}
		}
	}
	if p := filepath.Join(dataDir, SnapshotsDir); exists(p) {
		moves = append(moves, move{p, dataDir})
	}
	if len(moves) == 0 {
		return nil, fmt.Errorf("storage: no Raft log or snapshots in %s or %s: nothing to move aside", dataDir, logDir)
	}
	if oldDB != "" {
		if err := checkUnlocked(oldDB); err != nil {
			return nil, err
		}
		res.readTermAndVote(oldDB)
	} else {
		res.Warnings = append(res.Warnings, "no raft.db: the member's term and vote are unknown")
	}
	if conf, ok := LastConfiguration(dataDir, logDir); ok && len(conf.Servers) == 1 {
		return nil, errNoPeers(conf)
	}

	for _, m := range moves {
		aside := filepath.Join(m.dir, stamp)
		if err := PrivateDir(aside, nil); err != nil {
			return nil, err
		}
		to := filepath.Join(aside, filepath.Base(m.from))
		if exists(to) {
			return nil, fmt.Errorf("storage: %s already exists; try again in a second", to)
		}
		if err := os.Rename(m.from, to); err != nil {
			return nil, fmt.Errorf("storage: move %s aside: %w", m.from, err)
		}
		res.Moved = append(res.Moved, m.from+" -> "+to)
		if err := syncDir(m.dir); err != nil {
			return nil, err
		}
	}
	if err := res.writeFreshDB(filepath.Join(logDir, LogStoreFile)); err != nil {
		return nil, err
	}
	return res, syncDir(logDir)
}

// readTermAndVote reads Raft's term and vote from the raft.db at path,
// if it is whole enough for bolt to read (a damaged page can make bolt
// panic; that is a warning here, not a crash).
func (res *RejoinResult) readTermAndVote(path string) {
	if err := CheckBoltFile(path); err != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the term and vote cannot be read: %v", err))
		return
	}
	defer func() {
		if r := recover(); r != nil {
			res.Term, res.VoteKept = 0, false
			res.Warnings = append(res.Warnings, fmt.Sprintf("the term and vote cannot be read: %s: %v", path, r))
		}
	}()
	db, err := raftboltdb.New(raftboltdb.Options{Path: path, BoltOptions: &bbolt.Options{ReadOnly: true, Timeout: time.Second}})
	if err != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the term and vote cannot be read: %v", err))
		return
	}
	defer db.Close()
	term, err := db.GetUint64(keyCurrentTerm)
	if err != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the current term cannot be read: %v", err))
		return
	}
	res.Term = term
	voteTerm, err1 := db.GetUint64(keyLastVoteTerm)
	cand, err2 := db.Get(keyLastVoteCand)
	if err1 == nil && err2 == nil && voteTerm != 0 {
		res.voteTerm, res.voteCand, res.VoteKept = voteTerm, cand, true
	}
}

// writeFreshDB creates raft.db at path with the term (at least 1, so
// that Raft sees existing state and does not bootstrap) and the vote.
func (res *RejoinResult) writeFreshDB(path string) error {
	if res.Term == 0 {
		res.Term = 1
		res.Warnings = append(res.Warnings, "the term starts at 1: the member may vote again in a term it voted in before; "+
			"rejoin it while the rest of the ensemble has a quorum")
	}
	db, err := raftboltdb.New(raftboltdb.Options{Path: path, BoltOptions: &bbolt.Options{Timeout: time.Second}})
	if err != nil {
		return fmt.Errorf("storage: create %s: %w", path, err)
	}
	err = db.SetUint64(keyCurrentTerm, res.Term)
	if err == nil && res.VoteKept {
		err = db.SetUint64(keyLastVoteTerm, res.voteTerm)
		if err == nil {
			err = db.Set(keyLastVoteCand, res.voteCand)
		}
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("storage: write %s: %w", path, err)
	}
	return PrivateTree(path, nil)
}

// checkUnlocked fails when a process (the member) holds bolt's lock on
// path: it takes the lock for a moment and lets it go.
func checkUnlocked(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("storage: open %s: %w", path, err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("storage: %s is in use: stop the member first: %w", path, err)
		}
		return fmt.Errorf("storage: lock %s: %w", path, err)
	}
	return nil
}

// uniqueDirs lists a and b, once if they are the same directory.
func uniqueDirs(a, b string) []string {
	if filepath.Clean(a) == filepath.Clean(b) {
		return []string{a}
	}
	return []string{a, b}
}

// exists reports whether path exists.
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
