package watches

import "github.com/zkraft/zkraft/jute"

// NodeLookup reports what SetWatches needs to know about a path in the
// current tree: whether the node exists, and its mzxid and pzxid.
type NodeLookup func(path string) (mzxid, pzxid int64, exists bool)

// SetWatches re-arms a reconnecting client's watches (setWatches, op 101, and
// setWatches2, op 105), mirroring ZooKeeper's DataTree.setWatches. Changes
// the client missed since sw.RelativeZxid are reported at once instead:
//
//	data watch   NodeDeleted if the node is gone, NodeDataChanged if mzxid > relativeZxid, else re-armed
//	exist watch  NodeCreated if the node now exists, else re-armed
//	child watch  NodeDeleted if the node is gone, NodeChildrenChanged if pzxid > relativeZxid, else re-armed
//	persistent and persistent-recursive watches (V2 only): re-armed, no catch-up
//
// Like ZooKeeper, catch-up notifications carry zxid -1 and are not READ
// filtered. The lists are processed in that order, each path in client
// order. Call it under the tree's read lock so lookups and registrations see
// one state of the tree. A stale watcher (see StaleWatcher) is ignored.
func (r *Registry) SetWatches(sw *jute.SetWatches, w Watcher, lookup NodeLookup) {
	if isStale(w) {
		return
	}
	for _, path := range sw.DataWatches {
		mzxid, _, ok := lookup(path)
		switch {
		case !ok:
			w.Notify(path, jute.EventNodeDeleted, -1)
		case mzxid > sw.RelativeZxid:
			w.Notify(path, jute.EventNodeDataChanged, -1)
		default:
			r.AddData(path, w)
		}
	}
	for _, path := range sw.ExistWatches {
		if _, _, ok := lookup(path); ok {
			w.Notify(path, jute.EventNodeCreated, -1)
		} else {
			r.AddExist(path, w)
		}
	}
	for _, path := range sw.ChildWatches {
		_, pzxid, ok := lookup(path)
		switch {
		case !ok:
			w.Notify(path, jute.EventNodeDeleted, -1)
		case pzxid > sw.RelativeZxid:
			w.Notify(path, jute.EventNodeChildrenChanged, -1)
		default:
			r.AddChild(path, w)
		}
	}
	if !sw.V2 {
		return
	}
	for _, path := range sw.PersistentWatches {
		r.AddPersistent(path, w, false)
	}
	for _, path := range sw.PersistentRecursive {
		r.AddPersistent(path, w, true)
	}
}
