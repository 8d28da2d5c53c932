package importer

import (
	"fmt"
	"maps"
	"slices"

	"github.com/zkraft/zkraft/internal/zookeeper/datadir"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// Result is a ZooKeeper data directory as a zkraft tree.
type Result struct {
	Tree *znode.Tree
	// LastZxid is ZooKeeper's last logged zxid: zkraft's log must go on
	// above it, so clients that saw it are not refused as ahead of it.
	LastZxid int64
	Snapshot string   // the snapshot file loaded, "" when none
	Logs     []string // the log files read
	Replayed int      // transactions replayed after the snapshot
	Skipped  int      // error transactions
	// Settled counts the changes a fuzzy snapshot (ZooKeeper snapshots
	// while it serves) already held: their replay fails as NodeExists,
	// NoNode, BadVersion or NotEmpty and changes nothing, as in ZooKeeper.
	// Conflicts describes the first 20.
	Settled   int
	Conflicts []string
	// NotApplied counts the logged changes the tree refused for another
	// reason (which ZooKeeper's replay applies): Unapplied describes the
	// first 20, each with its zxid, type, path and the code refusing it.
	// This server's own settings never refuse one (replayOptions).
	NotApplied int
	Unapplied  []string
	// DeadEphemerals are ephemerals the snapshot held whose sessions are
	// not open after the replay: deleted, as ZooKeeper does when it
	// loads (Tree.SettleEphemerals).
	DeadEphemerals []string
}

// Load reads ZooKeeper's dataDir and dataLogDir ("" when they are one) and
// builds the tree ZooKeeper would serve from them. opts are the tree's own
// options (the server's): every node the snapshot holds and every change
// logged applies whatever they are (a TTL node without ExtendedTypes
// included); they decide only the tree's reads and its clients' writes.
func Load(dataDir, logDir string, opts znode.Options) (*Result, error) {
	d, err := datadir.Load(dataDir, logDir)
	if err != nil {
		return nil, err
	}
	res := &Result{LastZxid: d.LastZxid(), Snapshot: d.SnapshotFile, Logs: d.Logs}
	var dangling danglingACLs
	var unowned map[int64][]string
	if d.Snapshot == nil {
		res.Tree = znode.NewTree(opts)
	} else if res.Tree, dangling, unowned, err = fromSnapshot(d.Snapshot, opts, Passwd); err != nil {
		return nil, err
	}
	if err := res.replay(d.Txns, dangling, unowned); err != nil {
		return nil, err
	}
	return res, nil
}

// replay replays the logged transactions over res.Tree, the snapshot's,
// by ZooKeeper's rules for a fuzzy snapshot (replayStep,
// danglingACLs.settle), then ends as ZooKeeper's load does: the
// snapshot's ephemerals of sessions it lacked go to their sessions if
// those opened in the replay, else they are deleted (Tree.SettleEphemerals).
func (res *Result) replay(txns []datadir.Txn, dangling danglingACLs, unowned map[int64][]string) error {
	f := &Follower{tree: res.Tree, dangling: dangling, unowned: unowned}
	for _, t := range txns {
		if err := f.Apply(t); err != nil {
			return err
		}
	}
	res.Replayed, res.Skipped, res.Settled, res.Conflicts = f.Replayed, f.Skipped, f.Settled, f.Conflicts
	res.NotApplied, res.Unapplied = f.NotApplied, f.Unapplied
	if err := dangling.check(res.Tree); err != nil {
		return err
	}
	res.Tree.AdvanceZxid(res.LastZxid)
	var rest []string
	for _, id := range slices.Sorted(maps.Keys(unowned)) {
		rest = append(rest, unowned[id]...)
	}
	res.DeadEphemerals = res.Tree.SettleEphemerals(res.LastZxid, rest)
	return nil
}

// apply applies a replayed transaction. ZooKeeper's replay checks no
// sessions, and a fuzzy snapshot can lack the session of a transaction
// logged after it (closed while the snapshot was written): the
// transaction then runs in a session opened for it and closed after it,
// so it takes effect and any ephemeral it made goes with the session.
func apply(tree *znode.Tree, txn *znode.Txn, zxid int64) *znode.Result {
	if txn.Type == jute.OpCreateSession || txn.Type == jute.OpCloseSession || txn.Type == jute.OpDeleteContainer {
		return tree.Apply(txn, zxid)
	}
	if _, ok := tree.Session(txn.Session); ok {
		return tree.Apply(txn, zxid)
	}
	tree.Apply(&znode.Txn{Type: jute.OpCreateSession, Session: txn.Session, Time: txn.Time, Timeout: 1, Passwd: Passwd(txn.Session)}, zxid)
	r := tree.Apply(txn, zxid)
	tree.Apply(&znode.Txn{Type: jute.OpCloseSession, Session: txn.Session, Time: txn.Time}, zxid)
	return r
}

// fromSnapshot builds the tree of a ZooKeeper snapshot. A fuzzy snapshot
// (its sessions and ACL cache are written before its nodes) can hold a
// node whose ACL index the cache lacks: the node is given an open ACL for
// now and returned among the dangling, for the replay to set its ACL. It
// can also hold ephemerals of sessions it lacks: unowned lists, by owner,
// the nodes whose owner field names no session of the snapshot, for
// Tree.SettleEphemerals when their session opens in the replay, or once
// the replay is done. passwd gives each session its password.
func fromSnapshot(s *datadir.Snapshot, opts znode.Options, passwd func(int64) []byte) (_ *znode.Tree, dangling danglingACLs, unowned map[int64][]string, _ error) {
	open := []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}
	known := make(map[int64]bool, len(s.Sessions))
	for _, ss := range s.Sessions {
		known[ss.ID] = true
	}
	nodes := make([]znode.StoredNode, len(s.Nodes))
	for i, n := range s.Nodes {
		if owner, ok := znode.OwnerSession(n.Stat.EphemeralOwner); ok && !known[owner] {
			if unowned == nil {
				unowned = make(map[int64][]string)
			}
			unowned[owner] = append(unowned[owner], n.Path)
		}
		list := open
		if n.ACL != datadir.OpenACL {
			l, ok := s.ACLs[n.ACL]
			if ok {
				list = l
			} else {
				if dangling == nil {
					dangling = make(danglingACLs)
				}
				dangling[n.Path] = n.ACL
			}
		}
		nodes[i] = znode.StoredNode{Path: n.Path, Data: n.Data, ACL: list, Stat: n.Stat}
	}
	sessions := make([]znode.SessionInfo, len(s.Sessions))
	for i, ss := range s.Sessions {
		sessions[i] = znode.SessionInfo{ID: ss.ID, Timeout: ss.Timeout, Passwd: passwd(ss.ID)}
	}
	t, err := znode.Import(nodes, sessions, s.Zxid, opts)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("importer: %w", err)
	}
	return t, dangling, unowned, nil
}
