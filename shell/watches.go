package shell

import (
	"sort"

	"github.com/zkraft/zkraft/jute"
)

// watchSet records the watches this shell set, as the Java client's
// ZKWatchManager does, so removewatches can report what it removed and
// persistent watches can be re-armed after a reconnect. Guarded by
// session.mu.
type watchSet struct {
	data, exist, child    map[string]bool
	persistent, recursive map[string]bool
}

// Watcher types of checkWatches/removeWatches (WatcherType).
const (
	watcherChildren            = 1
	watcherData                = 2
	watcherAny                 = 3
	watcherPersistent          = 4
	watcherPersistentRecursive = 5
)

func addTo(m *map[string]bool, path string) {
	if *m == nil {
		*m = map[string]bool{}
	}
	(*m)[path] = true
}

// fired forgets the one-shot watches a notification of type t on path
// consumed.
func (w *watchSet) fired(path string, t int32) {
	switch t {
	case 1, 3: // NodeCreated, NodeDataChanged
		delete(w.data, path)
		delete(w.exist, path)
	case 2: // NodeDeleted
		delete(w.data, path)
		delete(w.exist, path)
		delete(w.child, path)
	case 4: // NodeChildrenChanged
		delete(w.child, path)
	}
}

// has reports whether a watch of watcher type wt is recorded on path.
func (w *watchSet) has(path string, wt int32) bool {
	switch wt {
	case watcherChildren:
		return w.child[path]
	case watcherData:
		return w.data[path] || w.exist[path]
	case watcherPersistent:
		return w.persistent[path]
	case watcherPersistentRecursive:
		return w.recursive[path]
	}
	return w.child[path] || w.data[path] || w.exist[path] || w.persistent[path] || w.recursive[path]
}

// remove forgets the watches of type wt on path and returns the local
// removal events the Java client would deliver, in a fixed order.
func (w *watchSet) remove(path string, wt int32) []string {
	var evs []string
	if (wt == watcherData || wt == watcherAny) && (w.data[path] || w.exist[path]) {
		delete(w.data, path)
		delete(w.exist, path)
		evs = append(evs, "DataWatchRemoved")
	}
	if (wt == watcherChildren || wt == watcherAny) && w.child[path] {
		delete(w.child, path)
		evs = append(evs, "ChildWatchRemoved")
	}
	if (wt == watcherPersistent || wt == watcherAny) && w.persistent[path] ||
		(wt == watcherPersistentRecursive || wt == watcherAny) && w.recursive[path] {
		if wt != watcherPersistentRecursive {
			delete(w.persistent, path)
		}
		if wt != watcherPersistent {
			delete(w.recursive, path)
		}
		evs = append(evs, "PersistentWatchRemoved")
	}
	return evs
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// persistentWatches lists the persistent and persistent-recursive watches.
// The paths are the server's (chroot applied).
func (ss *session) persistentWatches() (exact, recursive []string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	c := chrootConn{root: ss.root}
	for _, p := range sortedKeys(ss.watches.persistent) {
		exact = append(exact, c.server(p))
	}
	for _, p := range sortedKeys(ss.watches.recursive) {
		recursive = append(recursive, c.server(p))
	}
	return exact, recursive
}

// rearmPersistent sends a SetWatches2 for the persistent watches as soon as a
// reconnect completes (go-zookeeper's own SetWatches only knows one-shot
// watches, and is sent only when it has some; when it does, the tap also
// rewrites it to carry the persistent ones, see tapConn.Write). The reply is
// read and dropped by the tap.
func (ss *session) rearmPersistent(c *tapConn) {
	p, r := ss.persistentWatches()
	if c == nil || len(p)+len(r) == 0 {
		return
	}
	ss.tap.sendAsync(c, jute.OpSetWatches2, &jute.SetWatches{
		RelativeZxid:        ss.tap.lastZxid(),
		DataWatches:         []string{},
		ExistWatches:        []string{},
		ChildWatches:        []string{},
		PersistentWatches:   p,
		PersistentRecursive: r,
		V2:                  true,
	})
}

// noteWatch records a watch set by a command.
func (ss *session) noteWatch(path string, kind string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	switch kind {
	case "data":
		addTo(&ss.watches.data, path)
	case "exist":
		addTo(&ss.watches.exist, path)
	case "child":
		addTo(&ss.watches.child, path)
	case "persistent":
		addTo(&ss.watches.persistent, path)
	case "recursive":
		addTo(&ss.watches.recursive, path)
	}
}
