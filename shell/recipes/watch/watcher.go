package watch

import (
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/go-zookeeper/zk"
)

// seen is what the watcher last saw of a node.
type seen struct {
	czxid, mzxid int64
	// children are the names last listed (every node when recursive,
	// the root alone otherwise), with their czxids for the root's
	// children when not recursive.
	children map[string]int64
}

// watcher follows root (and, when recursive, its descendants) on conn.
// Its methods run on one goroutine.
type watcher struct {
	conn      *zk.Conn
	root      string
	recursive bool
	snap      map[string]*seen
	// armedData and armedKids list the paths holding a live exists
	// watch and children watch, so that a re-read arms no second one.
	armedData, armedKids map[string]bool
	fired                chan zk.Event // watch notifications
}

func newWatcher(conn *zk.Conn, root string, recursive bool) *watcher {
	return &watcher{conn: conn, root: root, recursive: recursive, snap: map[string]*seen{},
		armedData: map[string]bool{}, armedKids: map[string]bool{}, fired: make(chan zk.Event, 256)}
}

// follows reports whether p is a node the watcher reports on.
func (w *watcher) follows(p string) bool {
	if p == w.root {
		return true
	}
	prefix := w.root + "/"
	if w.root == "/" {
		prefix = "/"
	}
	if !strings.HasPrefix(p, prefix) {
		return false
	}
	return w.recursive || !strings.Contains(p[len(prefix):], "/")
}

// forward hands a watch's one notification to w.fired.
func (w *watcher) forward(ch <-chan zk.Event) {
	go func() {
		if ev, ok := <-ch; ok {
			w.fired <- ev
		}
	}()
}

// disarm notes that the watches ev fired (or ended) are gone.
func (w *watcher) disarm(ev zk.Event) {
	switch ev.Type {
	case zk.EventNodeChildrenChanged:
		w.armedKids[ev.Path] = false
	case zk.EventNotWatching:
		w.armedKids[ev.Path], w.armedData[ev.Path] = false, false
	default:
		w.armedData[ev.Path] = false
	}
}

// forgetArms drops every watch mark: the session's watches are gone.
func (w *watcher) forgetArms() {
	w.armedData, w.armedKids = map[string]bool{}, map[string]bool{}
}

// sync re-reads p, arming its watches, and returns what changed since
// the snapshot; deep re-reads the descendants already known too (after
// a reconnect), else only the new ones are read.
func (w *watcher) sync(p string, deep bool) ([]Event, error) {
	var exists bool
	var st *zk.Stat
	var err error
	if w.armedData[p] {
		exists, st, err = w.conn.Exists(p)
	} else {
		var ch <-chan zk.Event
		exists, st, ch, err = w.conn.ExistsW(p)
		if err == nil {
			w.armedData[p] = true
			w.forward(ch)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("exists %s: %w", p, err)
	}
	prev := w.snap[p]
	if !exists {
		if prev == nil {
			return nil, nil
		}
		return w.forget(p, w.parentPzxid(p)), nil
	}
	var evs []Event
	data, st2, err := w.conn.Get(p)
	if errors.Is(err, zk.ErrNoNode) {
		return w.sync(p, deep) // gone between the two reads: note the deletion
	}
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", p, err)
	}
	st = st2
	switch {
	case prev == nil:
		evs = append(evs, Event{Type: NodeCreated, Path: p, Zxid: st.Czxid, Data: data})
		if st.Mzxid != st.Czxid {
			evs = append(evs, Event{Type: NodeDataChanged, Path: p, Zxid: st.Mzxid, Data: data})
		}
	case prev.czxid != st.Czxid: // deleted and created again
		evs = append(w.forget(p, st.Czxid), Event{Type: NodeCreated, Path: p, Zxid: st.Czxid, Data: data})
		if st.Mzxid != st.Czxid {
			evs = append(evs, Event{Type: NodeDataChanged, Path: p, Zxid: st.Mzxid, Data: data})
		}
	case prev.mzxid != st.Mzxid:
		evs = append(evs, Event{Type: NodeDataChanged, Path: p, Zxid: st.Mzxid, Data: data})
	}
	cur := w.snap[p]
	if cur == nil {
		cur = &seen{}
		w.snap[p] = cur
		if parent := w.snap[path.Dir(p)]; parent != nil && parent.children != nil && p != w.root {
			parent.children[path.Base(p)] = st.Czxid
		}
	}
	cur.czxid, cur.mzxid = st.Czxid, st.Mzxid
	if p != w.root && !w.recursive {
		return evs, nil
	}
	kids, err := w.syncChildren(p, cur, deep)
	return append(evs, kids...), err
}

// syncChildren lists p's children, arming the children watch, and
// returns the creations and deletions since the snapshot.
func (w *watcher) syncChildren(p string, cur *seen, deep bool) ([]Event, error) {
	var names []string
	var st *zk.Stat
	var err error
	if w.armedKids[p] {
		names, st, err = w.conn.Children(p)
	} else {
		var ch <-chan zk.Event
		names, st, ch, err = w.conn.ChildrenW(p)
		if err == nil {
			w.armedKids[p] = true
			w.forward(ch)
		}
	}
	if errors.Is(err, zk.ErrNoNode) {
		return w.sync(p, false)
	}
	if err != nil {
		return nil, fmt.Errorf("children of %s: %w", p, err)
	}
	sort.Strings(names)
	old := cur.children
	if old == nil {
		old = map[string]int64{}
	}
	cur.children = map[string]int64{}
	var evs []Event
	var errs []error
	now := map[string]bool{}
	for _, n := range names {
		now[n] = true
	}
	for n := range old {
		if !now[n] {
			evs = append(evs, w.forgetChild(p, n, st.Pzxid)...)
		}
	}
	for _, n := range names {
		c := join(p, n)
		czxid, known := old[n]
		if w.recursive {
			cur.children[n] = czxid
			if known && !deep {
				continue
			}
			sub, err := w.sync(c, true)
			evs = append(evs, sub...)
			if err != nil {
				if connLost(err) {
					return evs, err
				}
				errs = append(errs, err) // the other children still count
			}
			continue
		}
		_, cst, err := w.conn.Exists(c)
		if err != nil || cst == nil {
			continue // gone already: the next listing notes it
		}
		cur.children[n] = cst.Czxid
		switch {
		case !known:
			evs = append(evs, Event{Type: NodeCreated, Path: c, Zxid: cst.Czxid})
		case czxid != cst.Czxid:
			evs = append(evs, Event{Type: NodeDeleted, Path: c, Zxid: cst.Czxid}, Event{Type: NodeCreated, Path: c, Zxid: cst.Czxid})
		}
	}
	return evs, errors.Join(errs...)
}

// connLost reports whether err means the connection or session went:
// the tree is read again once it is back.
func connLost(err error) bool {
	return errors.Is(err, zk.ErrConnectionClosed) || errors.Is(err, zk.ErrNoServer) ||
		errors.Is(err, zk.ErrSessionExpired) || errors.Is(err, zk.ErrSessionMoved) || errors.Is(err, zk.ErrClosing)
}

// forgetChild drops child n of p (and, recursive, its subtree) from the
// snapshot, returning its deletion at zxid.
func (w *watcher) forgetChild(p, n string, zxid int64) []Event {
	c := join(p, n)
	if w.recursive {
		return w.forget(c, zxid)
	}
	return []Event{{Type: NodeDeleted, Path: c, Zxid: zxid}}
}

// forget drops p and its descendants from the snapshot and returns
// their deletions at zxid, the deepest first.
func (w *watcher) forget(p string, zxid int64) []Event {
	var gone []string
	for q := range w.snap {
		if q == p || strings.HasPrefix(q, strings.TrimSuffix(p, "/")+"/") {
			gone = append(gone, q)
		}
	}
	sort.Slice(gone, func(i, j int) bool { return gone[i] > gone[j] })
	evs := make([]Event, 0, len(gone))
	for _, q := range gone {
		delete(w.snap, q)
		evs = append(evs, Event{Type: NodeDeleted, Path: q, Zxid: zxid})
	}
	if parent := w.snap[path.Dir(p)]; parent != nil && parent.children != nil {
		delete(parent.children, path.Base(p))
	}
	return evs
}

// parentPzxid is the pzxid of p's parent: the zxid of p's deletion
// when nothing under the parent changed since.
func (w *watcher) parentPzxid(p string) int64 {
	if p == "/" {
		return 0
	}
	_, st, err := w.conn.Exists(path.Dir(p))
	if err != nil || st == nil {
		return 0
	}
	return st.Pzxid
}

func join(p, n string) string {
	if p == "/" {
		return "/" + n
	}
	return p + "/" + n
}
