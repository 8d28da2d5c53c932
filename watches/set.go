package watches

// mode is a set of watch modes of one watcher on one path in one of
// ZooKeeper's two managers (data or child), like ZooKeeper's WatchStats.
type mode uint8

const (
	modeStandard   mode = 1 << iota // one-shot: getData, exists, getChildren
	modePersistent                  // addWatch PERSISTENT
	modeRecursive                   // addWatch PERSISTENT_RECURSIVE (data side only)
)

// entry is one watcher's watches on one path.
type entry struct {
	w     Watcher
	data  mode // modes in the data manager
	child mode // modes in the child manager
}

func (e *entry) empty() bool { return e.data == 0 && e.child == 0 }

// indexThreshold is the number of watchers on one path above which a path
// gets a watcher → position index. Most paths have one or two watchers, and a
// short slice scan is both smaller and faster than a map there.
const indexThreshold = 16

// pathWatches holds the watchers of one path: a dense slice (fast fan-out),
// plus an index for paths with many watchers (fast add/remove).
type pathWatches struct {
	list  []entry
	index map[Watcher]int // nil while len(list) <= indexThreshold
}

// find returns the position of w, or -1.
func (p *pathWatches) find(w Watcher) int {
	if p.index != nil {
		if i, ok := p.index[w]; ok {
			return i
		}
		return -1
	}
	for i := range p.list {
		if p.list[i].w == w {
			return i
		}
	}
	return -1
}

// get returns w's entry, adding an empty one if needed; added reports
// whether it was new.
func (p *pathWatches) get(w Watcher) (e *entry, added bool) {
	if i := p.find(w); i >= 0 {
		return &p.list[i], false
	}
	p.list = append(p.list, entry{w: w})
	n := len(p.list)
	switch {
	case p.index != nil:
		p.index[w] = n - 1
	case n > indexThreshold:
		p.index = make(map[Watcher]int, 2*n)
		for i := range p.list {
			p.index[p.list[i].w] = i
		}
	}
	return &p.list[n-1], true
}

// removeAt deletes the entry at i by moving the last entry into its place.
func (p *pathWatches) removeAt(i int) {
	last := len(p.list) - 1
	if p.index != nil {
		delete(p.index, p.list[i].w)
		if i != last {
			p.index[p.list[last].w] = i
		}
	}
	p.list[i] = p.list[last]
	p.list[last] = entry{} // drop the reference for the GC
	p.list = p.list[:last]
	if p.index != nil && len(p.list) <= indexThreshold/2 {
		p.index = nil
	}
	if cap(p.list) > 4*indexThreshold && len(p.list) < cap(p.list)/4 {
		p.list = append([]entry(nil), p.list...)
	}
}
