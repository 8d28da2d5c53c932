package watches

import (
	"sync"

	"github.com/zkraft/zkraft/jute"
)

// Watcher receives notifications. One Watcher stands for one client
// connection: it is used as a map key, so implementations must be comparable
// (in practice a pointer), and the same value must be passed to every call
// made for the connection.
type Watcher interface {
	// Notify queues a notification. It must not block. It is called without
	// the registry lock held.
	Notify(path string, typ jute.EventType, zxid int64)
	// Ids returns the connection's identities for the READ filter. The
	// registry does not retain or modify the slice.
	Ids() []jute.Id
}

// SessionWatcher is a Watcher that can name its session, for the wchc and
// wchp dumps. Watchers that do not implement it are reported as session 0.
type SessionWatcher interface {
	Watcher
	SessionID() int64
}

// StaleWatcher is a Watcher that can report that its connection has closed.
// Registrations for a stale watcher are ignored, like ZooKeeper's
// isDeadWatcher check, so a read still in flight when the connection closes
// cannot leak a watch after RemoveWatcher: mark the watcher stale first, then
// call RemoveWatcher.
type StaleWatcher interface {
	Watcher
	Stale() bool
}

// Registry is the watch table of one server. The zero value is an empty
// registry ready to use. It is safe for concurrent use.
type Registry struct {
	mu sync.Mutex
	// paths maps a path to its watchers; a path with no watchers is absent.
	paths map[string]*pathWatches
	// byWatcher maps a watcher to the set of paths it watches (reverse index,
	// for RemoveWatcher and wchc). Keys share their bytes with paths' keys.
	byWatcher map[Watcher]map[string]struct{}
	// recursive counts (path, watcher) pairs with a recursive mode; while it
	// is 0 Trigger does not look at ancestors.
	recursive int
	// dataCount and childCount count (path, watcher) pairs with a mode in the
	// data or child manager (mntr's zk_watch_count is their sum).
	dataCount, childCount int
}

// New returns an empty Registry (the same as a zero Registry).
func New() *Registry {
	return &Registry{
		paths:     make(map[string]*pathWatches),
		byWatcher: make(map[Watcher]map[string]struct{}),
	}
}

// AddData registers a one-shot data watch (getData on an existing node, or
// exists on an existing node).
func (r *Registry) AddData(path string, w Watcher) { r.add(path, w, modeStandard, 0) }

// AddExist registers a one-shot watch for exists on a missing node. ZooKeeper
// keeps exist watches in the data manager, so this is the same watch as
// AddData: it fires on NodeCreated (or any later data event on the path).
func (r *Registry) AddExist(path string, w Watcher) { r.add(path, w, modeStandard, 0) }

// AddChild registers a one-shot child watch (getChildren on an existing node).
func (r *Registry) AddChild(path string, w Watcher) { r.add(path, w, 0, modeStandard) }

// AddPersistent registers an addWatch watch. A persistent watch (recursive
// false) goes into both managers, as ZooKeeper's DataTree.addWatch does; a
// persistent-recursive one only into the data manager, which is why it never
// sees NodeChildrenChanged. The path need not exist.
func (r *Registry) AddPersistent(path string, w Watcher, recursive bool) {
	if recursive {
		r.add(path, w, modeRecursive, 0)
		return
	}
	r.add(path, w, modePersistent, modePersistent)
}

func isStale(w Watcher) bool {
	s, ok := w.(StaleWatcher)
	return ok && s.Stale()
}

// add ORs data and child modes into w's entry for path.
func (r *Registry) add(path string, w Watcher, data, child mode) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if isStale(w) {
		return
	}
	if r.paths == nil {
		r.paths = make(map[string]*pathWatches)
		r.byWatcher = make(map[Watcher]map[string]struct{})
	}
	p, ok := r.paths[path]
	if !ok {
		p = &pathWatches{list: make([]entry, 0, 1)}
		r.paths[path] = p
	}
	e, added := p.get(w)
	if added {
		set, ok := r.byWatcher[w]
		if !ok {
			set = make(map[string]struct{})
			r.byWatcher[w] = set
		}
		set[path] = struct{}{}
	}
	r.setModes(e, e.data|data, e.child|child)
}

// setModes changes e's modes, keeping the counters in step. It does not
// remove an entry that becomes empty; callers do.
func (r *Registry) setModes(e *entry, data, child mode) {
	if (e.data&modeRecursive != 0) != (data&modeRecursive != 0) {
		if data&modeRecursive != 0 {
			r.recursive++
		} else {
			r.recursive--
		}
	}
	r.dataCount += b2i(data != 0) - b2i(e.data != 0)
	r.childCount += b2i(child != 0) - b2i(e.child != 0)
	e.data, e.child = data, child
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// drop removes the empty entry at i of path's watchers from both indexes.
func (r *Registry) drop(path string, p *pathWatches, i int) {
	w := p.list[i].w
	p.removeAt(i)
	if len(p.list) == 0 {
		delete(r.paths, path)
	}
	if set, ok := r.byWatcher[w]; ok {
		delete(set, path)
		if len(set) == 0 {
			delete(r.byWatcher, w)
		}
	}
}

// RemoveWatcher drops every watch of w; call it when the connection closes
// (see StaleWatcher for the race with in-flight reads).
func (r *Registry) RemoveWatcher(w Watcher) {
	r.mu.Lock()
	defer r.mu.Unlock()
	set, ok := r.byWatcher[w]
	if !ok {
		return
	}
	delete(r.byWatcher, w)
	for path := range set {
		p, ok := r.paths[path]
		if !ok {
			continue
		}
		i := p.find(w)
		if i < 0 {
			continue
		}
		r.setModes(&p.list[i], 0, 0)
		p.removeAt(i)
		if len(p.list) == 0 {
			delete(r.paths, path)
		}
	}
}
