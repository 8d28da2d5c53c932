package watches

import (
	"slices"
)

// Operator reports. ZooKeeper's wchs, wchc and wchp (and the AdminServer's
// watch_summary, watches, watches_by_path) look only at the data manager, so
// watches set by getChildren alone do not appear in them; these functions do
// the same. Only mntr's zk_watch_count (Count) covers both managers.

// Stats returns the wchs summary: connections with a data-manager watch,
// paths with one, and (connection, path) pairs.
func (r *Registry) Stats() (watchers, paths, total int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ws := make(map[Watcher]struct{})
	for _, p := range r.paths {
		hasData := false
		for i := range p.list {
			if p.list[i].data != 0 {
				hasData = true
				ws[p.list[i].w] = struct{}{}
			}
		}
		if hasData {
			paths++
		}
	}
	return len(ws), paths, r.dataCount
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
// sorted, distinct session ids watching it (see SessionWatcher).
func (r *Registry) ByPath() map[string][]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string][]int64)
	for path, p := range r.paths {
		var ids []int64
		for i := range p.list {
			if p.list[i].data != 0 {
				ids = append(ids, sessionID(p.list[i].w))
			}
		}
		if ids != nil {
			slices.Sort(ids)
			out[path] = slices.Compact(ids)
		}
	}
	return out
}

// BySession returns the wchc dump: each session with a data-manager watch
// and the sorted, distinct paths it watches (see SessionWatcher).
func (r *Registry) BySession() map[int64][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[int64][]string)
	for w, set := range r.byWatcher {
		id := sessionID(w)
		for path := range set {
			p, ok := r.paths[path]
			if !ok {
				continue
			}
			if i := p.find(w); i >= 0 && p.list[i].data != 0 {
				out[id] = append(out[id], path)
			}
		}
	}
	for id, paths := range out {
		slices.Sort(paths)
		out[id] = slices.Compact(paths)
	}
	return out
}
