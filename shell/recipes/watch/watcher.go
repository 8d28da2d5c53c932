package watch

import (
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/zookeeper/watchconn"
	"github.com/zkraft/zkraft/jute"
)

// node is what the watcher last saw of a node: the zxids of its
// creation, last data change and last change of its children list.
type node struct{ czxid, mzxid, pzxid int64 }

// watcher follows root (and, when recursive, its descendants). It reads
// on conn; its methods run on one goroutine.
type watcher struct {
	conn      *zk.Conn
	root      string
	recursive bool
	withData  bool // read the data of created and changed nodes
	// snap is every followed node the watcher knows of: the root alone
	// when not recursive.
	snap map[string]node
}

func newWatcher(conn *zk.Conn, root string, recursive bool) *watcher {
	return &watcher{conn: conn, root: root, recursive: recursive, snap: map[string]node{}}
}

// follows reports whether p is a node the watcher reports on: the root,
// and every descendant when recursive (a persistent watch reports on the
// root alone, its children only as its NodeChildrenChanged).
func (w *watcher) follows(p string) bool {
	if p == w.root {
		return true
	}
	prefix := w.root + "/"
	if w.root == "/" {
		prefix = "/"
	}
	return w.recursive && strings.HasPrefix(p, prefix)
}

// apply takes one notification into the snapshot and returns the event
// to print, or false when the snapshot already holds it (a re-read after
// a reconnect found it first).
func (w *watcher) apply(ev watchconn.Event) (Event, bool) {
	p, z := ev.Path, ev.Zxid
	if !w.follows(p) {
		return Event{}, false
	}
	n, had := w.snap[p]
	out := Event{Path: p, Zxid: z}
	switch ev.Type {
	case jute.EventNodeCreated:
		if had && n.czxid >= z {
			return Event{}, false
		}
		w.snap[p] = node{czxid: z, mzxid: z, pzxid: z}
		out.Type = NodeCreated
	case jute.EventNodeDataChanged:
		if had && n.mzxid >= z {
			return Event{}, false
		}
		n.mzxid = z
		w.snap[p] = n
		out.Type = NodeDataChanged
	case jute.EventNodeChildrenChanged:
		if had && n.pzxid >= z {
			return Event{}, false
		}
		n.pzxid = z
		w.snap[p] = n
		out.Type = NodeChildrenChanged
	case jute.EventNodeDeleted:
		if !had || n.czxid > z {
			return Event{}, false
		}
		delete(w.snap, p)
		out.Type = NodeDeleted
	default:
		return Event{}, false
	}
	if w.withData && (out.Type == NodeCreated || out.Type == NodeDataChanged) {
		out.Data, out.HasData = w.dataAt(p, out.Type, z)
	}
	return out, true
}

// dataAt reads p's data as of the change at zxid: a read that shows an
// older version (the read's member is behind the watch's) is made again
// after a sync; one that shows a later change returns false, that
// change's own event carrying the data.
func (w *watcher) dataAt(p, typ string, zxid int64) ([]byte, bool) {
	for attempt := 0; attempt < 2; attempt++ {
		data, st, err := w.conn.Get(p)
		switch {
		case err == nil && st.Mzxid == zxid && (typ != NodeCreated || st.Czxid == zxid):
			return data, true
		case err == nil && st.Mzxid > zxid, err != nil && !errors.Is(err, zk.ErrNoNode):
			return nil, false
		}
		if _, err := w.conn.Sync(p); err != nil {
			return nil, false
		}
	}
	return nil, false
}

// stat is a node as a re-read found it.
type stat struct {
	czxid, mzxid, pzxid int64
	data                []byte
}

// read reads the followed tree, after a sync so that it shows at least
// what the member holding the watch held when the watch was set. A node
// created after armed is left out (its creation is notified); a node
// that refuses READ is left out and named in the error. It stops at the
// first error that means the connection or session went.
func (w *watcher) read(armed int64) (map[string]stat, error) {
	if _, err := w.conn.Sync(w.root); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return nil, fmt.Errorf("sync %s: %w", w.root, err)
	}
	tree := map[string]stat{}
	var errs []error
	stack := []string{w.root}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		data, st, err := w.conn.Get(p)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			err = fmt.Errorf("get %s: %w", p, err)
			if connLost(err) || p == w.root {
				return nil, err
			}
			errs = append(errs, err) // the other nodes still count
			continue
		}
		if st.Czxid > armed {
			continue
		}
		tree[p] = stat{czxid: st.Czxid, mzxid: st.Mzxid, pzxid: st.Pzxid, data: data}
		if !w.recursive {
			break
		}
		kids, _, err := w.conn.Children(p)
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			err = fmt.Errorf("children of %s: %w", p, err)
			if connLost(err) {
				return nil, err
			}
			errs = append(errs, err)
		}
		sort.Sort(sort.Reverse(sort.StringSlice(kids)))
		for _, k := range kids {
			stack = append(stack, join(p, k))
		}
	}
	return tree, errors.Join(errs...)
}

// catchUp compares tree (read after a watch set at armed) with the
// snapshot, makes it the snapshot, and returns what changed, in zxid
// order. A change after armed is left to the watch's notification: a
// node whose mzxid or pzxid is later keeps the one the snapshot had.
func (w *watcher) catchUp(tree map[string]stat, armed int64) []Event {
	upTo := func(z, fallback int64) int64 {
		if z <= armed {
			return z
		}
		return fallback
	}
	withData := func(ev Event, s stat) Event {
		if w.withData && s.mzxid == ev.Zxid {
			ev.Data, ev.HasData = s.data, true
		}
		return ev
	}
	// Deletions first: one reported at the pzxid a later creation set
	// stays before it.
	var evs []Event
	var gone []string
	for p := range w.snap {
		if _, ok := tree[p]; !ok {
			gone = append(gone, p)
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(gone))) // the deepest first
	for _, p := range gone {
		evs = append(evs, Event{Type: NodeDeleted, Path: p, Zxid: w.deletedAt(p, tree)})
	}
	paths := make([]string, 0, len(tree))
	for p := range tree {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	next := make(map[string]node, len(tree))
	for _, p := range paths {
		s := tree[p]
		old, had := w.snap[p]
		same := had && old.czxid == s.czxid
		n := node{czxid: s.czxid, mzxid: upTo(s.mzxid, s.czxid), pzxid: upTo(s.pzxid, s.czxid)}
		if same {
			n.mzxid, n.pzxid = upTo(s.mzxid, old.mzxid), upTo(s.pzxid, old.pzxid)
		}
		next[p] = n
		switch {
		case same:
			if n.mzxid != old.mzxid {
				evs = append(evs, withData(Event{Type: NodeDataChanged, Path: p, Zxid: n.mzxid}, s))
			}
			if !w.recursive && n.pzxid != old.pzxid {
				evs = append(evs, Event{Type: NodeChildrenChanged, Path: p, Zxid: n.pzxid})
			}
			continue
		case had: // deleted and created again: when is not known
			evs = append(evs, Event{Type: NodeDeleted, Path: p, Zxid: s.czxid})
		}
		evs = append(evs, withData(Event{Type: NodeCreated, Path: p, Zxid: s.czxid}, s))
		if n.mzxid != s.czxid {
			evs = append(evs, withData(Event{Type: NodeDataChanged, Path: p, Zxid: n.mzxid}, s))
		}
	}
	w.snap = next
	sortEvents(evs)
	return evs
}

// deletedAt is the zxid to report p's deletion at: the pzxid of its
// nearest ancestor still there, the last change of that children list.
func (w *watcher) deletedAt(p string, tree map[string]stat) int64 {
	for q := path.Dir(p); ; q = path.Dir(q) {
		if s, ok := tree[q]; ok {
			return s.pzxid
		}
		if q == w.root || q == "/" {
			break
		}
	}
	if w.root == "/" {
		return 0
	}
	_, st, err := w.conn.Exists(path.Dir(w.root))
	if err != nil || st == nil {
		return 0
	}
	return st.Pzxid
}

// connLost reports whether err means the connection or session went:
// the tree is read again once it is back.
func connLost(err error) bool {
	return errors.Is(err, zk.ErrConnectionClosed) || errors.Is(err, zk.ErrNoServer) ||
		errors.Is(err, zk.ErrSessionExpired) || errors.Is(err, zk.ErrSessionMoved) || errors.Is(err, zk.ErrClosing)
}

func join(p, n string) string {
	if p == "/" {
		return "/" + n
	}
	return p + "/" + n
}
