package session

import (
	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// superIDs reads the tree without an ACL check (SetWatches catch-up, like
// ZooKeeper's, is not READ filtered).
var superIDs = []jute.Id{{Scheme: "super"}}

// setWatches re-arms the watches a client held before it reconnected.
//
// With relock (the backend whose read lock the caller holds) it lets the
// lock go every relockEvery paths: each path is still looked up and its
// watch registered under one hold, so no change to it slips between the
// two, and a change between holds fires the watches registered before.
func (c *conn) setWatches(t *znode.Tree, req *jute.SetWatches, relock backend.Backend) {
	n := 0
	c.srv.backend().Watches().SetWatches(req, c, func(path string) (mzxid, pzxid int64, exists bool) {
		if n++; relock != nil && n%relockEvery == 0 {
			t = relockTree(relock)
		}
		stat, err := t.Exists(path, superIDs)
		return stat.Mzxid, stat.Pzxid, err == nil
	})
}

// relockEvery is how many paths (SetWatches) or ops (multiRead) a read
// handles per hold of the tree's read lock.
const relockEvery = 1024

// relockTree lets be's read lock go and takes it again, so a waiting
// writer goes first; it returns the tree, which a snapshot installed
// meanwhile may have replaced.
func relockTree(be backend.Backend) *znode.Tree {
	be.RUnlockTree()
	return be.RLockTree()
}

// watchOp handles addWatch, checkWatches and removeWatches. Like
// ZooKeeper it does not validate the path: a malformed one matches no
// watch (NoWatcher) and a watch added on it never fires.
//
// What ZooKeeper cannot interpret it answers MarshallingError (its
// FinalRequestProcessor's answer to an exception), keeping the connection:
// an addWatch mode other than 0 and 1 (WatcherMode.fromZooDef) and a
// watcher type outside 1-5 (WatcherType.fromInt). ZooKeeper 3.8 also
// fails a checkWatches on a path without any '/' (its containsWatcher took
// the path's parent first); 3.9 looks the path up, as zkraft does.
func (c *conn) watchOp(op jute.Op, req *jute.PathTypeRequest) (jute.ErrCode, jute.Record) {
	reg := c.srv.backend().Watches()
	if op != jute.OpAddWatch && (req.Type < jute.WatcherChildren || req.Type > jute.WatcherPersistentRecursive) {
		return jute.ErrMarshallingError, nil
	}
	switch op {
	case jute.OpAddWatch:
		switch req.Type {
		case jute.AddWatchPersistent:
			reg.AddPersistent(req.Path, c, false)
		case jute.AddWatchPersistentRecursive:
			reg.AddPersistent(req.Path, c, true)
		default:
			return jute.ErrMarshallingError, nil
		}
		return jute.OK, &jute.ErrorResponse{Err: jute.OK}
	case jute.OpCheckWatches:
		if !reg.Check(req.Path, c, req.Type) {
			return jute.ErrNoWatcher, nil
		}
	case jute.OpRemoveWatches:
		if !reg.Remove(req.Path, c, req.Type) {
			return jute.ErrNoWatcher, nil
		}
	}
	return jute.OK, nil
}
