package watches

import (
	"runtime"
	"slices"
)

// Operator reports. ZooKeeper's wchs, wchc and wchp (and the AdminServer's
// watch_summary, watches, watches_by_path) look only at the data manager, so
// watches set by getChildren alone do not appear in them; these functions do
// the same. Only mntr's zk_watch_count (Count) covers both managers.

// dumpBudget is about how many entries (paths and the watchers on them)
// a report visits per hold of the registry's lock. The reports walk the
// whole table, which at a million watches took 1-2 s under one hold, and
// Trigger and every watch a read sets wait for that lock: a loop of
// AdminServer requests (/commands/watches needs no whitelist) stalled
// every write's watch fan-out on the member. Between holds the others
// take the lock; a report then sees the table as it is as the walk
// reaches each path, not as it was at one instant, which no operator
// reading it can tell apart while watches come and go.
const dumpBudget = 4096

// watchRef is one data-manager watch a report found.
type watchRef struct {
	path string
	w    Watcher
}

// eachDataWatch calls fn with every data-manager watch, path by path. It
// holds the lock only to copy about dumpBudget entries at a time (a
// path's watchers are never split), and calls fn for them after letting
// it go, so fn may take its time (it must not keep w beyond the call's
// needs: the watch may be gone by then). A path removed and added again
// during the walk may be visited twice, or not at all (its new slot may
// be behind the walk); the reports compact their lists, and Stats counts
// paths as a set.
func (r *Registry) eachDataWatch(fn func(path string, w Watcher)) {
	buf := make([]watchRef, 0, dumpBudget)
	flush := func() {
		for _, ref := range buf {
			fn(ref.path, ref.w)
		}
		clear(buf) // drop the references to watchers
		buf = buf[:0]
	}
	r.mu.Lock()
	visited := 0
	// Go's map iteration is defined under changes made between its
	// steps, and every change is made under mu: releasing it between
	// steps is a change in the loop's body, not a race.
	for path, p := range r.paths {
		for i := range p.list {
			if p.list[i].data != 0 {
				buf = append(buf, watchRef{path, p.list[i].w})
			}
		}
		if visited += 1 + len(p.list); visited >= dumpBudget {
			visited = 0
			r.mu.Unlock()
			flush()
			if testHookBetweenChunks != nil {
				testHookBetweenChunks()
			}
			runtime.Gosched()
			r.mu.Lock()
		}
	}
	r.mu.Unlock()
	flush()
}

// testHookBetweenChunks, set by tests only, runs each time eachDataWatch
// has let the lock go between two chunks.
var testHookBetweenChunks func()

// Stats returns the wchs summary: connections with a data-manager watch,
// paths with one, and (connection, path) pairs. The walk lets the lock go
// between chunks (eachDataWatch); the pair count is the counter's, read at
// its end. Paths are counted as a set, as the watchers are: a path whose
// watch fired and was set again during the walk (a client re-setting its
// watch on every event) may be visited twice, and counted twice it could
// come out above the pair count.
func (r *Registry) Stats() (watchers, paths, total int) {
	ws := make(map[Watcher]struct{})
	ps := make(map[string]struct{})
	last := ""
	r.eachDataWatch(func(path string, w Watcher) {
		ws[w] = struct{}{}
		if path != last { // a path's watchers come one after another
			ps[path] = struct{}{}
			last = path
		}
	})
	r.mu.Lock()
	total = r.dataCount
	r.mu.Unlock()
	return len(ws), len(ps), total
}

// Count returns the number of watches in both managers, ZooKeeper's
// DataTree.getWatchCount (mntr zk_watch_count): a persistent watch counts
// twice, a getData and a getChildren watch on one path by one connection
// count once each.
func (r *Registry) Count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.dataCount + r.childCount
}

// sessionID returns w's session id if w is a SessionWatcher, else 0.
func sessionID(w Watcher) int64 {
	if s, ok := w.(SessionWatcher); ok {
		return s.SessionID()
	}
	return 0
}

// ByPath returns the wchp dump: each path with a data-manager watch and the
// sorted, distinct session ids watching it (see SessionWatcher). The lock
// is held only to copy a chunk of the table at a time (eachDataWatch).
func (r *Registry) ByPath() map[string][]int64 {
	out := make(map[string][]int64)
	r.eachDataWatch(func(path string, w Watcher) {
		out[path] = append(out[path], sessionID(w))
	})
	for path, ids := range out {
		slices.Sort(ids)
		out[path] = slices.Compact(ids)
	}
	return out
}

// BySession returns the wchc dump: each session with a data-manager watch
// and the sorted, distinct paths it watches (see SessionWatcher). The lock
// is held only to copy a chunk of the table at a time (eachDataWatch).
func (r *Registry) BySession() map[int64][]string {
	out := make(map[int64][]string)
	r.eachDataWatch(func(path string, w Watcher) {
		id := sessionID(w)
		out[id] = append(out[id], path)
	})
	for id, paths := range out {
		slices.Sort(paths)
		out[id] = slices.Compact(paths)
	}
	return out
}
