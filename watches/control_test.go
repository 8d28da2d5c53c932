package watches

import (
	"fmt"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

var watcherTypes = []int32{
	jute.WatcherChildren, jute.WatcherData, jute.WatcherAny,
	jute.WatcherPersistent, jute.WatcherPersistentRecursive,
}

// TestCheckRemove mirrors DataTree.containsWatcher/removeWatch for every
// registered kind × watcher type: what matches, and what is left afterwards.
func TestCheckRemove(t *testing.T) {
	// matches[kind] = watcher types that find (and remove) a watch of kind.
	matches := map[kind][]int32{
		kData:       {jute.WatcherData, jute.WatcherAny},
		kExist:      {jute.WatcherData, jute.WatcherAny},
		kChild:      {jute.WatcherChildren, jute.WatcherAny},
		kPersistent: {jute.WatcherPersistent, jute.WatcherAny},
		kRecursive:  {jute.WatcherPersistentRecursive, jute.WatcherAny},
	}
	for k, types := range matches {
		for _, typ := range watcherTypes {
			t.Run(fmt.Sprintf("%s/type%d", k, typ), func(t *testing.T) {
				want := false
				for _, m := range types {
					want = want || m == typ
				}
				r := New()
				w, other := newWatcher("w"), newWatcher("other")
				k.add(r, "/p", w)
				k.add(r, "/p", other)
				if got := r.Check("/p", w, typ); got != want {
					t.Fatalf("Check = %v, want %v", got, want)
				}
				if got := r.Remove("/p", w, typ); got != want {
					t.Fatalf("Remove = %v, want %v", got, want)
				}
				if got := r.Check("/p", w, jute.WatcherAny); got == want {
					t.Fatalf("after Remove, Check(Any) = %v", got)
				}
				if r.Remove("/p", w, typ) {
					t.Fatal("second Remove reported success")
				}
				if !r.Check("/p", other, k.checkType()) {
					t.Fatal("Remove touched another watcher")
				}
				checkInvariants(t, r)
			})
		}
	}
}

func TestCheckRemoveUnknown(t *testing.T) {
	r := New()
	w := newWatcher("w")
	if r.Check("/nope", w, jute.WatcherAny) || r.Remove("/nope", w, jute.WatcherAny) {
		t.Fatal("matched on an unwatched path")
	}
	r.AddData("/p", w)
	if r.Check("/p", newWatcher("x"), jute.WatcherAny) || r.Remove("/p", newWatcher("x"), jute.WatcherAny) {
		t.Fatal("matched another watcher")
	}
	for _, typ := range []int32{0, 6, -1} {
		if r.Check("/p", w, typ) || r.Remove("/p", w, typ) {
			t.Errorf("type %d matched", typ)
		}
	}
	if r.Check("/p/", w, jute.WatcherAny) {
		t.Error("paths are not normalised: /p/ must not match /p")
	}
}

// TestRemoveKeepsOtherModes: removing one mode leaves the others.
func TestRemoveKeepsOtherModes(t *testing.T) {
	r := New()
	w := newWatcher("w")
	for _, k := range []kind{kData, kChild, kPersistent, kRecursive} {
		k.add(r, "/p", w)
	}
	steps := []struct {
		typ  int32
		left []int32 // types still found afterwards
	}{
		{jute.WatcherData, []int32{jute.WatcherChildren, jute.WatcherPersistent, jute.WatcherPersistentRecursive}},
		{jute.WatcherPersistent, []int32{jute.WatcherChildren, jute.WatcherPersistentRecursive}},
		{jute.WatcherChildren, []int32{jute.WatcherPersistentRecursive}},
		{jute.WatcherPersistentRecursive, nil},
	}
	for _, s := range steps {
		if !r.Remove("/p", w, s.typ) {
			t.Fatalf("Remove(type %d) = false", s.typ)
		}
		for _, typ := range []int32{jute.WatcherChildren, jute.WatcherData, jute.WatcherPersistent, jute.WatcherPersistentRecursive} {
			want := false
			for _, l := range s.left {
				want = want || l == typ
			}
			if got := r.Check("/p", w, typ); got != want {
				t.Errorf("after removing type %d: Check(%d) = %v, want %v", s.typ, typ, got, want)
			}
		}
		checkInvariants(t, r)
	}
	if n := r.Count(); n != 0 {
		t.Fatalf("Count = %d, want 0", n)
	}
}

// TestRemoveAnyTakesEverything, including persistent-recursive, as ZooKeeper does.
func TestRemoveAnyTakesEverything(t *testing.T) {
	r := New()
	w := newWatcher("w")
	for _, k := range []kind{kData, kChild, kPersistent, kRecursive} {
		k.add(r, "/p", w)
	}
	if !r.Remove("/p", w, jute.WatcherAny) {
		t.Fatal("Remove(Any) = false")
	}
	if r.Check("/p", w, jute.WatcherAny) {
		t.Fatal("watches left after Remove(Any)")
	}
	r.Trigger("/p/c", created, 1, nil)
	if got := w.take(); len(got) != 0 {
		t.Fatalf("recursive watch still fires: %v", got)
	}
	checkInvariants(t, r)
}
