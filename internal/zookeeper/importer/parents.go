package importer

import (
	"strings"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// replayStep applies one replayed change as ZooKeeper's own replay would
// over a fuzzy snapshot (one written while ZooKeeper served, so it may
// hold changes logged after its zxid). The change itself applies as a
// live one does, or fails and changes nothing; but the parent's child
// counters (stored cversion and pzxid) follow the replay's rules, which
// never lower them:
//   - a create sets the parent's cversion to the logged parentCVersion,
//     and its pzxid to the create's zxid, only if that raises the
//     cversion (DataTree.createNode); a plain create whose node is
//     already there does the same (processTxn's setCversionPzxid);
//   - a delete raises the parent's pzxid to its zxid, also when the node
//     is already gone (DataTree.deleteNode);
//   - a closeSession deletes each logged ephemeral by path, whoever holds
//     it now, by the delete rule, before the session goes
//     (DataTree.killSession).
//
// A live apply instead adds one to the cversion: over a snapshot that
// caught a create and delete logged after it, that counts the create twice.
// It returns the change's result code.
func replayStep(tree *znode.Tree, s step, zxid int64) jute.ErrCode {
	return replayStepResult(tree, s, zxid).Err
}

// replayStepResult is replayStep returning the change's whole result: its
// code, reply and watch events.
func replayStepResult(tree *znode.Tree, s step, zxid int64) *znode.Result {
	switch s.kind {
	case stepCreate:
		parent := parentOf(s.path)
		cv, pz, ok := tree.ChildMeta(parent)
		res := apply(tree, s.txn, zxid)
		code := res.Err
		logged := s.parentCVersion
		if logged == -1 {
			logged = cv + 1
		}
		switch {
		case !ok:
		case code == jute.OK && logged > cv:
			tree.SetChildMeta(parent, logged, zxid)
		case code == jute.OK:
			tree.SetChildMeta(parent, cv, pz)
		case code == jute.ErrNodeExists && s.repair && logged > cv:
			tree.SetChildMeta(parent, logged, zxid)
		}
		return res
	case stepDelete:
		// A delete that succeeds raises the pzxid itself, never lowering it.
		res := apply(tree, s.txn, zxid)
		if res.Err == jute.ErrNoNode {
			parent := parentOf(s.path)
			if cv, pz, ok := tree.ChildMeta(parent); ok && zxid > pz {
				tree.SetChildMeta(parent, cv, zxid)
			}
		}
		return res
	case stepClose:
		for _, p := range s.paths {
			del := &znode.Txn{Type: jute.OpDelete, Session: s.txn.Session, Time: s.txn.Time, Ids: replayer,
				Req: jute.Marshal(&jute.PathVersionRequest{Path: p, Version: -1})}
			replayStep(tree, step{txn: del, kind: stepDelete, path: p}, zxid)
		}
		// Then the session goes, with any ephemerals it holds that were
		// not logged (ZooKeeper's ephemerals of the session).
		return apply(tree, s.txn, zxid)
	}
	return apply(tree, s.txn, zxid)
}

// parentOf is the path of a znode's parent: "/" for a child of the root,
// and for a logged path without a parent (which the replayed change then
// refuses as BadArguments).
func parentOf(path string) string {
	i := strings.LastIndexByte(path, '/')
	if i <= 0 {
		return "/"
	}
	return path[:i]
}
