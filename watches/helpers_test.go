package watches

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

// event is one notification received by a testWatcher.
type event struct {
	Path string
	Type jute.EventType
	Zxid int64
}

// testWatcher records its notifications.
type testWatcher struct {
	name  string
	sid   int64
	ids   []jute.Id
	stale atomic.Bool

	mu     sync.Mutex
	events []event
}

func newWatcher(name string, ids ...jute.Id) *testWatcher {
	return &testWatcher{name: name, ids: ids}
}

func (w *testWatcher) Notify(path string, typ jute.EventType, zxid int64) {
	w.mu.Lock()
	w.events = append(w.events, event{path, typ, zxid})
	w.mu.Unlock()
}

func (w *testWatcher) Ids() []jute.Id   { return w.ids }
func (w *testWatcher) SessionID() int64 { return w.sid }
func (w *testWatcher) Stale() bool      { return w.stale.Load() }
func (w *testWatcher) String() string   { return w.name }

// take returns and clears the recorded events.
func (w *testWatcher) take() []event {
	w.mu.Lock()
	defer w.mu.Unlock()
	ev := w.events
	w.events = nil
	return ev
}

// checkInvariants verifies that the forward and reverse indexes and the
// counters agree.
func checkInvariants(t *testing.T, r *Registry) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	var rec, data, child, pairs int
	for path, p := range r.paths {
		if len(p.list) == 0 {
			t.Errorf("path %q kept with no watchers", path)
		}
		if p.index != nil && len(p.index) != len(p.list) {
			t.Errorf("path %q: index has %d entries, list %d", path, len(p.index), len(p.list))
		}
		for i := range p.list {
			e := &p.list[i]
			if e.empty() {
				t.Errorf("path %q: empty entry for %v", path, e.w)
			}
			if e.child&modeRecursive != 0 {
				t.Errorf("path %q: recursive mode in child manager", path)
			}
			if p.index != nil && p.index[e.w] != i {
				t.Errorf("path %q: index[%v] = %d, want %d", path, e.w, p.index[e.w], i)
			}
			if _, ok := r.byWatcher[e.w][path]; !ok {
				t.Errorf("path %q: watcher %v missing from reverse index", path, e.w)
			}
			rec += b2i(e.data&modeRecursive != 0)
			data += b2i(e.data != 0)
			child += b2i(e.child != 0)
			pairs++
		}
	}
	var rev int
	for w, set := range r.byWatcher {
		if len(set) == 0 {
			t.Errorf("watcher %v kept with no paths", w)
		}
		for path := range set {
			if p, ok := r.paths[path]; !ok || p.find(w) < 0 {
				t.Errorf("reverse index has %v on %q, forward does not", w, path)
			}
			rev++
		}
	}
	if rev != pairs {
		t.Errorf("reverse index has %d pairs, forward %d", rev, pairs)
	}
	if rec != r.recursive || data != r.dataCount || child != r.childCount {
		t.Errorf("counters recursive/data/child = %d/%d/%d, want %d/%d/%d",
			r.recursive, r.dataCount, r.childCount, rec, data, child)
	}
}

func (e event) String() string { return fmt.Sprintf("%s %d @%d", e.Path, e.Type, e.Zxid) }
