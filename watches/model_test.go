package watches

import (
	"math/rand/v2"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

// This file checks the Registry against a transliteration of ZooKeeper
// 3.9's two WatchManagers and DataTree's use of them: the registry keeps
// both managers in one table, and the model keeps them apart exactly as
// ZooKeeper does, so any difference in who is notified, what Check/Remove
// answer or what the counters say shows up here.

// jManager is WatchManager: watchTable, watch2Paths with WatchStats flags,
// recursiveWatchQty.
type jManager struct {
	table        map[string]map[Watcher]bool
	w2p          map[Watcher]map[string]mode
	recursiveQty int
}

func newJManager() *jManager {
	return &jManager{table: map[string]map[Watcher]bool{}, w2p: map[Watcher]map[string]mode{}}
}

func (m *jManager) addWatch(path string, w Watcher, md mode) {
	if m.table[path] == nil {
		m.table[path] = map[Watcher]bool{}
	}
	m.table[path][w] = true
	if m.w2p[w] == nil {
		m.w2p[w] = map[string]mode{}
	}
	stats := m.w2p[w][path]
	if stats|md != stats {
		m.w2p[w][path] = stats | md
		if md == modeRecursive {
			m.recursiveQty++
		}
	}
}

func (m *jManager) removeCnxn(w Watcher) {
	paths, ok := m.w2p[w]
	if !ok {
		return
	}
	delete(m.w2p, w)
	for p, stats := range paths {
		delete(m.table[p], w)
		if len(m.table[p]) == 0 {
			delete(m.table, p)
		}
		if stats&modeRecursive != 0 {
			m.recursiveQty--
		}
	}
}

// trigger is triggerWatch: it returns every watcher collected (the
// WatcherOrBitSet) and the subset delivered (not suppressed).
func (m *jManager) trigger(path string, suppress map[Watcher]bool) (collected, delivered map[Watcher]bool) {
	collected = map[Watcher]bool{}
	level := 0
	for p, ok := path, true; ok; p, ok = parent(p) {
		if level > 0 && m.recursiveQty == 0 {
			break // PathParentIterator.forPathOnly
		}
		for w := range m.table[p] {
			stats := m.w2p[w][p]
			if level == 0 {
				collected[w] = true
				if ns := stats &^ modeStandard; ns == 0 {
					delete(m.table[p], w)
					delete(m.w2p[w], p)
				} else {
					m.w2p[w][p] = ns
				}
			} else if stats&modeRecursive != 0 {
				collected[w] = true
			}
		}
		if len(m.table[p]) == 0 {
			delete(m.table, p)
		}
		level++
	}
	delivered = map[Watcher]bool{}
	for w := range collected {
		if !suppress[w] {
			delivered[w] = true
		}
	}
	return collected, delivered
}

func (m *jManager) contains(path string, w Watcher, md mode) bool {
	stats, ok := m.w2p[w][path]
	return ok && (md == 0 || stats&md != 0)
}

// remove is removeWatcher(path, watcher, mode); md 0 stands for null.
func (m *jManager) remove(path string, w Watcher, md mode) bool {
	paths, ok1 := m.w2p[w]
	watchers, ok2 := m.table[path]
	if !ok1 || !ok2 {
		return false
	}
	unwatch := func() mode {
		stats, ok := paths[path]
		if !ok {
			return 0
		}
		delete(paths, path)
		if len(paths) == 0 {
			delete(m.w2p, w)
		}
		delete(watchers, w)
		if len(watchers) == 0 {
			delete(m.table, path)
		}
		return stats
	}
	var oldStats, newStats mode
	if md != 0 {
		oldStats = paths[path]
		newStats = oldStats &^ md
		if newStats != 0 {
			if newStats != oldStats {
				paths[path] = newStats
			}
		} else if oldStats != 0 {
			unwatch()
		}
	} else {
		oldStats = unwatch()
	}
	if oldStats&modeRecursive != 0 && newStats&modeRecursive == 0 {
		m.recursiveQty--
	}
	return oldStats != newStats
}

func (m *jManager) size() int {
	n := 0
	for _, ws := range m.table {
		n += len(ws)
	}
	return n
}

// jTree is the watch side of DataTree.
type jTree struct{ data, child *jManager }

func (t *jTree) trigger(path string, typ jute.EventType) map[Watcher]bool {
	switch typ {
	case jute.EventNodeCreated, jute.EventNodeDataChanged:
		_, d := t.data.trigger(path, nil)
		return d
	case jute.EventNodeDeleted:
		processed, d := t.data.trigger(path, nil)
		_, c := t.child.trigger(path, processed)
		for w := range c {
			d[w] = true
		}
		return d
	case jute.EventNodeChildrenChanged:
		_, c := t.child.trigger(path, nil)
		return c
	}
	return nil
}

func (t *jTree) containsWatcher(path string, typ int32, w Watcher) bool {
	switch typ {
	case jute.WatcherChildren:
		return t.child.contains(path, w, modeStandard)
	case jute.WatcherData:
		return t.data.contains(path, w, modeStandard)
	case jute.WatcherPersistent:
		return t.data.contains(path, w, modePersistent)
	case jute.WatcherPersistentRecursive:
		return t.data.contains(path, w, modeRecursive)
	case jute.WatcherAny:
		return t.child.contains(path, w, 0) || t.data.contains(path, w, 0)
	}
	return false
}

func (t *jTree) removeWatch(path string, typ int32, w Watcher) bool {
	switch typ {
	case jute.WatcherChildren:
		return t.child.remove(path, w, modeStandard)
	case jute.WatcherData:
		return t.data.remove(path, w, modeStandard)
	case jute.WatcherPersistent:
		a := t.child.remove(path, w, modePersistent)
		b := t.data.remove(path, w, modePersistent)
		return a || b
	case jute.WatcherPersistentRecursive:
		return t.data.remove(path, w, modeRecursive)
	case jute.WatcherAny:
		a := t.child.remove(path, w, 0)
		b := t.data.remove(path, w, 0)
		return a || b
	}
	return false
}

// summary is WatchManager.getWatchesSummary of the data manager, except
// that ZooKeeper keeps a watch2Paths entry whose map a trigger emptied
// (until the connection closes) and counts it as a watching connection; the
// registry does not, and neither does this model.
func (t *jTree) summary() (watchers, paths, total int) {
	for _, ps := range t.data.w2p {
		if len(ps) > 0 {
			watchers++
		}
		total += len(ps)
	}
	return watchers, len(t.data.table), total
}

var modelPaths = []string{"/", "/a", "/a/b", "/a/b/c", "/x", "/a/bc"}

// runModel interprets ops (3 bytes each) against both implementations.
func runModel(t *testing.T, ops []byte) {
	r := New()
	j := &jTree{data: newJManager(), child: newJManager()}
	ws := []*testWatcher{newWatcher("w0"), newWatcher("w1"), newWatcher("w2")}
	for len(ops) >= 3 {
		code, p, wi := ops[0], modelPaths[int(ops[1])%len(modelPaths)], int(ops[2])
		ops = ops[3:]
		w := ws[wi%len(ws)]
		switch code % 9 {
		case 0:
			r.AddData(p, w)
			j.data.addWatch(p, w, modeStandard)
		case 1:
			r.AddChild(p, w)
			j.child.addWatch(p, w, modeStandard)
		case 2: // DataTree.addWatch PERSISTENT
			r.AddPersistent(p, w, false)
			j.data.addWatch(p, w, modePersistent)
			j.child.addWatch(p, w, modePersistent)
		case 3:
			r.AddPersistent(p, w, true)
			j.data.addWatch(p, w, modeRecursive)
		case 4, 5:
			typ := allTypes[wi%len(allTypes)]
			want := j.trigger(p, typ)
			r.Trigger(p, typ, 1, nil)
			for _, x := range ws {
				got := x.take()
				if len(got) > 1 || (len(got) == 1) != want[x] {
					t.Fatalf("trigger %s event %d: %s got %v, ZooKeeper would notify: %v", p, typ, x.name, got, want[x])
				}
			}
		case 6:
			typ := int32(wi%6) + 0
			if got, want := r.Check(p, w, typ), j.containsWatcher(p, typ, w); got != want {
				t.Fatalf("Check(%s, %s, %d) = %v, ZooKeeper %v", p, w.name, typ, got, want)
			}
		case 7:
			typ := int32(wi%6) + 0
			w = ws[(wi/6)%len(ws)]
			if got, want := r.Remove(p, w, typ), j.removeWatch(p, typ, w); got != want {
				t.Fatalf("Remove(%s, %s, %d) = %v, ZooKeeper %v", p, w.name, typ, got, want)
			}
		case 8:
			r.RemoveWatcher(w)
			j.data.removeCnxn(w)
			j.child.removeCnxn(w)
		}
		if got, want := r.Count(), j.data.size()+j.child.size(); got != want {
			t.Fatalf("Count = %d, ZooKeeper %d", got, want)
		}
		gw, gp, gt := r.Stats()
		jw, jp, jt := j.summary()
		if gw != jw || gp != jp || gt != jt {
			t.Fatalf("Stats = %d/%d/%d, ZooKeeper %d/%d/%d", gw, gp, gt, jw, jp, jt)
		}
	}
	checkInvariants(t, r)
}

// TestRegistryMatchesZooKeeperModel runs random operation sequences.
func TestRegistryMatchesZooKeeperModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 300 {
		ops := make([]byte, 3*200)
		for i := range ops {
			ops[i] = byte(rng.UintN(256))
		}
		runModel(t, ops)
	}
}

// FuzzRegistryModel lets the fuzzer search for a divergence.
func FuzzRegistryModel(f *testing.F) {
	f.Add([]byte{0, 2, 0, 2, 0, 0, 4, 2, 2, 8, 0, 0})
	f.Add([]byte{3, 0, 1, 0, 2, 1, 1, 2, 1, 4, 3, 1, 5, 2, 3, 7, 2, 3})
	f.Fuzz(func(t *testing.T, ops []byte) { runModel(t, ops) })
}
