package watches

import (
	"fmt"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

// kind is a way of registering a watch.
type kind int

const (
	kData kind = iota + 1
	kExist
	kChild
	kPersistent
	kRecursive
)

func (k kind) String() string {
	return [...]string{"?", "data", "exist", "child", "persistent", "recursive"}[k]
}

func (k kind) add(r *Registry, path string, w Watcher) {
	switch k {
	case kData:
		r.AddData(path, w)
	case kExist:
		r.AddExist(path, w)
	case kChild:
		r.AddChild(path, w)
	case kPersistent:
		r.AddPersistent(path, w, false)
	case kRecursive:
		r.AddPersistent(path, w, true)
	}
}

// checkType is the checkWatches type that finds a watch of this kind.
func (k kind) checkType() int32 {
	switch k {
	case kData, kExist:
		return jute.WatcherData
	case kChild:
		return jute.WatcherChildren
	case kPersistent:
		return jute.WatcherPersistent
	}
	return jute.WatcherPersistentRecursive
}

var (
	created  = jute.EventNodeCreated
	deleted  = jute.EventNodeDeleted
	changed  = jute.EventNodeDataChanged
	children = jute.EventNodeChildrenChanged
	allTypes = []jute.EventType{created, deleted, changed, children}
)

// TestTriggerMatrix covers every event type × watch kind × watch position,
// for a trigger on /a/b.
func TestTriggerMatrix(t *testing.T) {
	const target = "/a/b"
	type want struct{ fires, stays bool }
	oneShot := func(fireOn ...jute.EventType) map[jute.EventType]want {
		m := map[jute.EventType]want{}
		for _, typ := range allTypes {
			m[typ] = want{fires: false, stays: true}
		}
		for _, typ := range fireOn {
			m[typ] = want{fires: true, stays: false}
		}
		return m
	}
	lasting := func(fireOn ...jute.EventType) map[jute.EventType]want {
		m := map[jute.EventType]want{}
		for _, typ := range allTypes {
			m[typ] = want{stays: true}
		}
		for _, typ := range fireOn {
			m[typ] = want{fires: true, stays: true}
		}
		return m
	}
	cases := []struct {
		kind kind
		at   string
		want map[jute.EventType]want
	}{
		{kData, target, oneShot(created, deleted, changed)},
		{kExist, target, oneShot(created, deleted, changed)},
		{kChild, target, oneShot(deleted, children)},
		{kPersistent, target, lasting(created, deleted, changed, children)},
		{kRecursive, target, lasting(created, deleted, changed)},
		// ancestors: only recursive watches see descendants' events
		{kData, "/a", lasting()},
		{kExist, "/a", lasting()},
		{kChild, "/a", lasting()},
		{kPersistent, "/a", lasting()},
		{kRecursive, "/a", lasting(created, deleted, changed)},
		{kRecursive, "/", lasting(created, deleted, changed)},
		{kPersistent, "/", lasting()},
		// not ancestors
		{kRecursive, "/a/b/c", lasting()},
		{kRecursive, "/a/c", lasting()},
		{kRecursive, "/a/bb", lasting()},
		{kRecursive, "/a/", lasting()},
	}
	for _, tc := range cases {
		for _, typ := range allTypes {
			t.Run(fmt.Sprintf("%s@%s/event%d", tc.kind, tc.at, typ), func(t *testing.T) {
				r := New()
				w := newWatcher("w")
				tc.kind.add(r, tc.at, w)
				r.Trigger(target, typ, 42, nil)
				got := w.take()
				want := tc.want[typ]
				if want.fires {
					if len(got) != 1 || got[0] != (event{target, typ, 42}) {
						t.Fatalf("events = %v, want one %v", got, event{target, typ, 42})
					}
				} else if len(got) != 0 {
					t.Fatalf("events = %v, want none", got)
				}
				if stays := r.Check(tc.at, w, tc.kind.checkType()); stays != want.stays {
					t.Fatalf("watch still registered = %v, want %v", stays, want.stays)
				}
				checkInvariants(t, r)
			})
		}
	}
}

// TestTriggerDedupe registers one watcher every possible way: it gets one
// notification per trigger.
func TestTriggerDedupe(t *testing.T) {
	for _, typ := range allTypes {
		r := New()
		w := newWatcher("w")
		for _, k := range []kind{kData, kExist, kChild, kPersistent, kRecursive} {
			k.add(r, "/a/b", w)
		}
		kRecursive.add(r, "/a", w)
		kRecursive.add(r, "/", w)
		other := newWatcher("other")
		kRecursive.add(r, "/", other)
		kChild.add(r, "/a/b", other)
		r.Trigger("/a/b", typ, 7, nil)
		if got := w.take(); len(got) != 1 {
			t.Errorf("event %d: w got %v, want exactly one", typ, got)
		}
		if got := other.take(); len(got) != 1 {
			t.Errorf("event %d: other got %v, want exactly one", typ, got)
		}
		checkInvariants(t, r)
	}
}

// TestDeleteOnceForDataAndChild: a data and a child watch of one connection on
// a deleted node produce one NodeDeleted and are both consumed.
func TestDeleteOnceForDataAndChild(t *testing.T) {
	r := New()
	w := newWatcher("w")
	r.AddData("/n", w)
	r.AddChild("/n", w)
	r.Trigger("/n", deleted, 1, nil)
	if got := w.take(); len(got) != 1 {
		t.Fatalf("got %v, want one NodeDeleted", got)
	}
	if r.Check("/n", w, jute.WatcherAny) {
		t.Fatal("one-shot watches survived NodeDeleted")
	}
	if n := r.Count(); n != 0 {
		t.Fatalf("Count = %d, want 0", n)
	}
}

func TestOneShotRemovedPersistentStays(t *testing.T) {
	r := New()
	one, pers, rec := newWatcher("one"), newWatcher("pers"), newWatcher("rec")
	r.AddData("/x", one)
	r.AddPersistent("/x", pers, false)
	r.AddPersistent("/", rec, true)
	for zxid := int64(1); zxid <= 3; zxid++ {
		r.Trigger("/x", changed, zxid, nil)
	}
	if n := len(one.take()); n != 1 {
		t.Errorf("one-shot fired %d times, want 1", n)
	}
	if n := len(pers.take()); n != 3 {
		t.Errorf("persistent fired %d times, want 3", n)
	}
	if n := len(rec.take()); n != 3 {
		t.Errorf("recursive fired %d times, want 3", n)
	}
	// persistent watches survive the node's deletion and see its re-creation
	r.Trigger("/x", deleted, 4, nil)
	r.Trigger("/x", created, 5, nil)
	want := []event{{"/x", deleted, 4}, {"/x", created, 5}}
	if got := pers.take(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("persistent got %v, want %v", got, want)
	}
	checkInvariants(t, r)
}

// TestStandardOnPersistent: ZooKeeper 3.9 keeps modes side by side
// (ZOOKEEPER-4466); the one-shot is consumed, the persistent stays.
func TestStandardOnPersistent(t *testing.T) {
	for _, recursive := range []bool{false, true} {
		r := New()
		w := newWatcher("w")
		r.AddPersistent("/p", w, recursive)
		r.AddData("/p", w)
		r.AddChild("/p", w)
		r.Trigger("/p", changed, 1, nil)
		if got := w.take(); len(got) != 1 {
			t.Fatalf("recursive=%v: got %v, want one", recursive, got)
		}
		if r.Check("/p", w, jute.WatcherData) {
			t.Errorf("recursive=%v: data one-shot not consumed", recursive)
		}
		if !r.Check("/p", w, jute.WatcherChildren) {
			t.Errorf("recursive=%v: child one-shot consumed by a data event", recursive)
		}
		persistentType := jute.WatcherPersistent
		if recursive {
			persistentType = jute.WatcherPersistentRecursive
		}
		if !r.Check("/p", w, persistentType) {
			t.Errorf("recursive=%v: persistent watch lost", recursive)
		}
		r.Trigger("/p", changed, 2, nil)
		if got := w.take(); len(got) != 1 {
			t.Errorf("recursive=%v: second trigger got %v, want one", recursive, got)
		}
		checkInvariants(t, r)
	}
}

// TestCreateSequence mirrors what the tree emits for create /a/b: NodeCreated
// on /a/b then NodeChildrenChanged on /a. A recursive watch on /a sees only
// the first.
func TestCreateSequence(t *testing.T) {
	r := New()
	rec, pers, child := newWatcher("rec"), newWatcher("pers"), newWatcher("child")
	r.AddPersistent("/a", rec, true)
	r.AddPersistent("/a", pers, false)
	r.AddChild("/a", child)
	r.Trigger("/a/b", created, 9, nil)
	r.Trigger("/a", children, 9, nil)
	if got, want := rec.take(), []event{{"/a/b", created, 9}}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("recursive got %v, want %v", got, want)
	}
	if got, want := pers.take(), []event{{"/a", children, 9}}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("persistent got %v, want %v", got, want)
	}
	if got, want := child.take(), []event{{"/a", children, 9}}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("child got %v, want %v", got, want)
	}
}

func TestTriggerIgnoresOtherTypes(t *testing.T) {
	r := New()
	w := newWatcher("w")
	r.AddPersistent("/", w, false)
	r.AddData("/", w)
	r.Trigger("/", jute.EventNone, 1, nil)
	r.Trigger("/", jute.EventType(5), 1, nil)
	if got := w.take(); len(got) != 0 {
		t.Fatalf("got %v, want none", got)
	}
	if !r.Check("/", w, jute.WatcherData) {
		t.Fatal("one-shot consumed by an ignored event type")
	}
}

// TestNotifyMayReenter: Notify runs outside the registry lock, so a watcher
// may drop itself from inside Notify.
func TestNotifyMayReenter(t *testing.T) {
	r := New()
	w := &reentrantWatcher{r: r}
	r.AddPersistent("/", w, true)
	r.AddData("/q", w)
	r.Trigger("/q", changed, 1, nil)
	if w.calls != 1 {
		t.Fatalf("Notify called %d times, want 1", w.calls)
	}
	if n := r.Count(); n != 0 {
		t.Fatalf("Count = %d after RemoveWatcher from Notify, want 0", n)
	}
}

type reentrantWatcher struct {
	r     *Registry
	calls int
}

func (w *reentrantWatcher) Notify(string, jute.EventType, int64) { w.calls++; w.r.RemoveWatcher(w) }
func (w *reentrantWatcher) Ids() []jute.Id                       { return nil }

// TestRecursiveAncestorsOnly: recursive watches on two ancestors and none on
// the path itself still give one event per watcher.
func TestRecursiveAncestorsOnly(t *testing.T) {
	r := New()
	w, x := newWatcher("w"), newWatcher("x")
	r.AddPersistent("/a", w, true)
	r.AddPersistent("/", w, true)
	r.AddPersistent("/a/b", x, true)
	r.AddPersistent("/", x, true)
	r.Trigger("/a/b/c", created, 1, nil)
	if got := w.take(); len(got) != 1 {
		t.Errorf("w got %v, want one", got)
	}
	if got := x.take(); len(got) != 1 {
		t.Errorf("x got %v, want one", got)
	}
}
