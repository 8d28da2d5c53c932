package watches

import (
	"strings"
	"sync"

	"github.com/zkraft/zkraft/acl"
	"github.com/zkraft/zkraft/jute"
)

// maxPooledBuf bounds the capacity of collection buffers kept for reuse, so
// one huge fan-out does not pin its buffer forever.
const maxPooledBuf = 1 << 16

var bufPool = sync.Pool{New: func() any { return new([]Watcher) }}

// Trigger delivers one event to the watchers it concerns (ZooKeeper's
// DataTree.createNode/deleteNode/setData followed by WatchManager.triggerWatch):
//
//	NodeCreated, NodeDataChanged  every data-manager watch on path (one-shot data/exist
//	                              watches, persistent, recursive) + recursive watches on
//	                              every ancestor of path
//	NodeDeleted                   as above + every child-manager watch on path
//	                              (one-shot child watches, persistent)
//	NodeChildrenChanged           child-manager watches on path only: one-shot child
//	                              watches and persistent watches, never recursive ones
//
// Each watcher is notified at most once. One-shot modes involved are
// consumed; persistent and recursive ones stay. nodeACL is the ACL governing
// READ for this event (the parent's for NodeChildrenChanged): a watcher whose
// identities lack READ is not notified, but its one-shot watch is consumed
// all the same, as in ZooKeeper 3.9.2+. Other event types are ignored.
func (r *Registry) Trigger(path string, typ jute.EventType, zxid int64, nodeACL []jute.ACL) {
	var useData, useChild bool
	switch typ {
	case jute.EventNodeCreated, jute.EventNodeDataChanged:
		useData = true
	case jute.EventNodeDeleted:
		useData, useChild = true, true
	case jute.EventNodeChildrenChanged:
		useChild = true
	default:
		return
	}
	bp := bufPool.Get().(*[]Watcher)
	out := r.collect(path, useData, useChild, (*bp)[:0])
	if len(out) > 0 {
		open := readOpen(nodeACL)
		for _, w := range out {
			if open || acl.Check(nodeACL, jute.PermRead, w.Ids()) {
				w.Notify(path, typ, zxid)
			}
		}
	}
	clear(out)
	if cap(out) <= maxPooledBuf {
		*bp = out[:0]
		bufPool.Put(bp)
	}
}

// collect appends the watchers to notify to out and consumes their one-shot
// modes, under the lock.
func (r *Registry) collect(path string, useData, useChild bool, out []Watcher) []Watcher {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p, ok := r.paths[path]; ok {
		for i := 0; i < len(p.list); {
			e := &p.list[i]
			if (useData && e.data != 0) || (useChild && e.child != 0) {
				out = append(out, e.w)
				data, child := e.data, e.child
				if useData {
					data &^= modeStandard
				}
				if useChild {
					child &^= modeStandard
				}
				r.setModes(e, data, child)
				if e.empty() {
					r.drop(path, p, i)
					continue // the last entry moved into i
				}
			}
			i++
		}
	}
	if !useData || r.recursive == 0 {
		return out
	}
	// Recursive watches on ancestors. A watcher may already have been
	// collected at path or at a lower ancestor: dedupe with a set, built
	// only once a second level contributes watchers.
	var seen map[Watcher]struct{}
	for a, ok := parent(path); ok; a, ok = parent(a) {
		p, found := r.paths[a]
		if !found {
			continue
		}
		first := len(out) == 0 // nothing to dedupe against yet
		if !first && seen == nil {
			seen = make(map[Watcher]struct{}, len(out)+len(p.list))
			for _, w := range out {
				seen[w] = struct{}{}
			}
		}
		for i := range p.list {
			e := &p.list[i]
			if e.data&modeRecursive == 0 {
				continue
			}
			if !first {
				if _, dup := seen[e.w]; dup {
					continue
				}
				seen[e.w] = struct{}{}
			}
			out = append(out, e.w)
		}
	}
	return out
}

// parent returns the parent of a ZooKeeper path ("/a/b" → "/a" → "/"), or
// false for "/" and for strings that are not absolute paths.
func parent(p string) (string, bool) {
	if p == "/" {
		return "", false
	}
	i := strings.LastIndexByte(p, '/')
	switch {
	case i < 0:
		return "", false
	case i == 0:
		return "/", true
	}
	return p[:i], true
}

// readOpen reports whether list grants READ to everyone (empty list, or
// world:anyone with READ), so Trigger can skip per-watcher checks.
func readOpen(list []jute.ACL) bool {
	if len(list) == 0 {
		return true
	}
	for i := range list {
		a := &list[i]
		if a.Perms&jute.PermRead != 0 && a.ID.Scheme == "world" && a.ID.ID == "anyone" {
			return true
		}
	}
	return false
}
