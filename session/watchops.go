package session

import (
	"strings"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// superIDs reads the tree without an ACL check (SetWatches catch-up, like
// ZooKeeper's, is not READ filtered).
var superIDs = []jute.Id{{Scheme: "super"}}

// setWatches re-arms the watches a client held before it reconnected.
func (c *conn) setWatches(t *znode.Tree, req *jute.SetWatches) {
	c.srv.node.Watches().SetWatches(req, c, func(path string) (mzxid, pzxid int64, exists bool) {
		stat, err := t.Exists(path, superIDs)
		return stat.Mzxid, stat.Pzxid, err == nil
	})
}

// watchOp handles addWatch, checkWatches and removeWatches. Like
// ZooKeeper it does not validate the path: a malformed one matches no
// watch (NoWatcher) and a watch added on it never fires.
//
// What ZooKeeper cannot interpret it answers MarshallingError (its
// FinalRequestProcessor's answer to an exception), keeping the connection:
// an addWatch mode other than 0 and 1, a watcher type outside 1-5
// (WatcherType.fromInt), and a checkWatches path without any '/'
// (WatchManager.containsWatcher takes the path's parent before looking at
// it). The oracle also fails a checkWatches of type data or any on a
// relative path with a '/' inside ("a/b") while some session holds a
// recursive watch, unless a watch is registered on exactly that path;
// that corner is not copied (NoWatcher here).
func (c *conn) watchOp(op jute.Op, req *jute.PathTypeRequest) (jute.ErrCode, jute.Record) {
	reg := c.srv.node.Watches()
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
		if req.Path != "" && !strings.Contains(req.Path, "/") {
			return jute.ErrMarshallingError, nil
		}
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
