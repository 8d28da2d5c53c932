package watches

import "github.com/zkraft/zkraft/jute"

// Check reports whether w has a watch of watcherType on path (checkWatches);
// the server answers jute.ErrNoWatcher when it has not. It mirrors
// ZooKeeper's DataTree.containsWatcher:
//
//	WatcherChildren             one-shot child watch (getChildren); not persistent ones
//	WatcherData                 one-shot data watch (getData or exists)
//	WatcherAny                  any watch of any mode in either manager
//	WatcherPersistent           a PERSISTENT addWatch
//	WatcherPersistentRecursive  a PERSISTENT_RECURSIVE addWatch
//
// Unknown types match nothing.
func (r *Registry) Check(path string, w Watcher, watcherType int32) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.paths[path]
	if !ok {
		return false
	}
	i := p.find(w)
	if i < 0 {
		return false
	}
	e := &p.list[i]
	switch watcherType {
	case jute.WatcherChildren:
		return e.child&modeStandard != 0
	case jute.WatcherData:
		return e.data&modeStandard != 0
	case jute.WatcherAny:
		return !e.empty()
	case jute.WatcherPersistent:
		return e.data&modePersistent != 0
	case jute.WatcherPersistentRecursive:
		return e.data&modeRecursive != 0
	}
	return false
}

// Remove removes w's watches of watcherType on path (removeWatches) and
// reports whether anything was removed; the server answers
// jute.ErrNoWatcher when nothing was. It mirrors ZooKeeper's
// DataTree.removeWatch:
//
//	WatcherChildren             the one-shot child watch
//	WatcherData                 the one-shot data/exist watch
//	WatcherAny                  every watch of w on path, persistent and recursive included
//	WatcherPersistent           the PERSISTENT addWatch (both managers)
//	WatcherPersistentRecursive  the PERSISTENT_RECURSIVE addWatch
//
// Unknown types remove nothing.
func (r *Registry) Remove(path string, w Watcher, watcherType int32) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.paths[path]
	if !ok {
		return false
	}
	i := p.find(w)
	if i < 0 {
		return false
	}
	e := &p.list[i]
	data, child := e.data, e.child
	switch watcherType {
	case jute.WatcherChildren:
		child &^= modeStandard
	case jute.WatcherData:
		data &^= modeStandard
	case jute.WatcherAny:
		data, child = 0, 0
	case jute.WatcherPersistent:
		data &^= modePersistent
		child &^= modePersistent
	case jute.WatcherPersistentRecursive:
		data &^= modeRecursive
	default:
		return false
	}
	if data == e.data && child == e.child {
		return false
	}
	r.setModes(e, data, child)
	if e.empty() {
		r.drop(path, p, i)
	}
	return true
}
