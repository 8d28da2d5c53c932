package znode

import (
	"hash/maphash"
	"math/bits"
)

// childTable is the hash table behind a large childSet: open addressing over
// groups of eight slots, each group with a control word holding a byte per
// slot (empty, deleted, or seven bits of the name's hash), so one probe tests
// eight slots at once, as in Go's own maps. It differs from a
// map[string]*node in the ways that matter here:
//
//   - Size. A Go map splits a full 1024-slot table into two half-empty ones,
//     so it runs between 44% and 88% full: 41 bytes a child on average over
//     sizes, 51 at 1000 or 1,000,000 children. This table grows by a
//     quarter and stays between 70% and 88% full: 29-36 bytes a child, 32
//     on average.
//   - Speed. The control words sit in their own array (one byte a slot), so
//     the words probed while walking a path through many parents stay in
//     cache, and a lookup goes from the childSet straight to them; a Go map
//     adds its header, directory and table, each a likely cache miss.
//
// The price is that growing rehashes the whole table at once (amortized, an
// insert moves four entries), so a childSet never lets one table grow past
// maxTableEntries: above that it spreads its children over childShards.
// Slot order depends on a per-process hash seed and must never show:
// callers sort, or only count and sum.
type childTable struct {
	ctrl    []uint64     // a control word per group; byte i (little-endian) is slot i's
	entries []childEntry // groupSlots per group
	n       int32        // live entries
	dead    int32        // deleted slots, reclaimed by inserts and rehashing
}

const (
	groupSlots = 8
	// Control bytes: a full slot holds the low seven bits of its hash.
	ctrlEmpty   = 0x80
	ctrlDeleted = 0xfe
	ctrlAllFree = 0x8080808080808080 // a group of empty slots
	bytesLSB    = 0x0101010101010101
	bytesMSB    = 0x8080808080808080
	// The table rehashes when live and deleted slots would pass 7/8 of
	// the slots, to a size where the live ones fill 7/10 (growth by a
	// quarter).
	maxLoadNum, maxLoadDen = 7, 8
	newLoadNum, newLoadDen = 7, 10
	// It shrinks when deletes leave fewer than one slot in minLoadDen full.
	minLoadDen = 5
)

// childSeed seeds the name hash. It is random per process so nobody can
// pick names that collide, which is why slot order must never be observable.
var childSeed = maphash.MakeSeed()

// hashName hashes a child name. The low seven bits are the control tag,
// the top bits pick the group (see probe) and bits 7-14 the shard.
func hashName(name string) uint64 { return maphash.String(childSeed, name) }

// matchTag returns a bit (the top one of its byte) for every control byte
// of ctrl equal to tag. It may report false positives (the borrow of a true
// match can mark the next byte); callers compare names anyway.
func matchTag(ctrl uint64, tag uint8) uint64 {
	v := ctrl ^ (bytesLSB * uint64(tag))
	return (v - bytesLSB) &^ v & bytesMSB
}

// matchEmpty marks the empty control bytes (top bit set, bit 1 clear).
func matchEmpty(ctrl uint64) uint64 { return ctrl &^ (ctrl << 6) & bytesMSB }

// matchFree marks the empty and deleted control bytes.
func matchFree(ctrl uint64) uint64 { return ctrl & bytesMSB }

// matchFull marks the control bytes of live slots.
func matchFull(ctrl uint64) uint64 { return ^ctrl & bytesMSB }

// slotOf turns a match bit into a slot index within its group.
func slotOf(m uint64) int { return bits.TrailingZeros64(m) >> 3 }

// ctrlByte returns byte i of a control word.
func ctrlByte(ctrl uint64, i int) uint8 { return uint8(ctrl >> (uint(i) * 8)) }

// withCtrl returns ctrl with byte i set to c.
func withCtrl(ctrl uint64, i int, c uint8) uint64 {
	shift := uint(i) * 8
	return ctrl&^(0xff<<shift) | uint64(c)<<shift
}

// newChildTable returns a table sized for n entries.
func newChildTable(n int) childTable {
	groups := max((n*newLoadDen/newLoadNum+groupSlots-1)/groupSlots, 1)
	t := childTable{ctrl: make([]uint64, groups), entries: make([]childEntry, groups*groupSlots)}
	for i := range t.ctrl {
		t.ctrl[i] = ctrlAllFree
	}
	return t
}

// probe returns the tag and first group of the probe sequence for hash h.
func (t *childTable) probe(h uint64) (tag uint8, g int) {
	hi, _ := bits.Mul64(h, uint64(len(t.ctrl)))
	return uint8(h & 0x7f), int(hi)
}

// find returns the index in t.entries of name, whose hash is h, or -1.
func (t *childTable) find(name string, h uint64) int {
	if t.n == 0 {
		return -1
	}
	tag, g := t.probe(h)
	// At least one slot in eight is empty, so this ends well before it
	// has visited every group.
	for range t.ctrl {
		ctrl := t.ctrl[g]
		for m := matchTag(ctrl, tag); m != 0; m &= m - 1 {
			if i := g*groupSlots + slotOf(m); t.entries[i].name == name && t.entries[i].n != nil {
				return i
			}
		}
		if matchEmpty(ctrl) != 0 {
			return -1
		}
		if g++; g == len(t.ctrl) {
			g = 0
		}
	}
	return -1
}

// get returns the child called name (hash h), or nil.
func (t *childTable) get(name string, h uint64) *node {
	if i := t.find(name, h); i >= 0 {
		return t.entries[i].n
	}
	return nil
}

// add inserts a child (hash h); name must not be in the table.
func (t *childTable) add(name string, n *node, h uint64) {
	if int(t.n+t.dead+1)*maxLoadDen > len(t.entries)*maxLoadNum {
		t.rehash(int(t.n) + 1)
	}
	t.place(name, n, h)
}

// place puts an entry in the first free slot of its probe sequence, which
// is where a lookup will find it: every group before that one is full.
func (t *childTable) place(name string, n *node, h uint64) {
	tag, g := t.probe(h)
	for {
		if m := matchFree(t.ctrl[g]); m != 0 {
			s := slotOf(m)
			if ctrlByte(t.ctrl[g], s) == ctrlDeleted {
				t.dead--
			}
			t.ctrl[g] = withCtrl(t.ctrl[g], s, tag)
			t.entries[g*groupSlots+s] = childEntry{name, n}
			t.n++
			return
		}
		if g++; g == len(t.ctrl) {
			g = 0
		}
	}
}

// remove deletes the child called name (hash h), if present, and shrinks
// the table when it has become mostly empty. It reports whether name was
// present.
func (t *childTable) remove(name string, h uint64) bool {
	i := t.find(name, h)
	if i < 0 {
		return false
	}
	g, s := i/groupSlots, i%groupSlots
	// A group with an empty slot has never been full since the last
	// rehash, so no probe ever went past it and the slot can become empty
	// again; otherwise it must stay a tombstone, or lookups for entries
	// placed further along would stop here.
	if matchEmpty(t.ctrl[g]) != 0 {
		t.ctrl[g] = withCtrl(t.ctrl[g], s, ctrlEmpty)
	} else {
		t.ctrl[g] = withCtrl(t.ctrl[g], s, ctrlDeleted)
		t.dead++
	}
	t.entries[i] = childEntry{}
	t.n--
	if len(t.ctrl) > 1 && int(t.n)*minLoadDen < len(t.entries) {
		t.rehash(int(t.n))
	}
	return true
}

// rehash moves every entry into new arrays sized for n entries.
func (t *childTable) rehash(n int) {
	old := *t
	*t = newChildTable(n)
	old.each(func(name string, c *node) { t.place(name, c, hashName(name)) })
}

// each calls f for every entry, in slot order (random per process).
func (t *childTable) each(f func(name string, n *node)) {
	for g, ctrl := range t.ctrl {
		for m := matchFull(ctrl); m != 0; m &= m - 1 {
			e := &t.entries[g*groupSlots+slotOf(m)]
			f(e.name, e.n)
		}
	}
}

// eachEntry calls f with a pointer to every entry, in no particular order.
func (t *childTable) eachEntry(f func(e *childEntry)) {
	for g, ctrl := range t.ctrl {
		for m := matchFull(ctrl); m != 0; m &= m - 1 {
			f(&t.entries[g*groupSlots+slotOf(m)])
		}
	}
}

// copyGroups appends the entries of groups g on to dst, stopping before a
// group once at least max were appended; it returns dst, the next group
// and whether the table ended.
func (t *childTable) copyGroups(dst []childEntry, g, max int) ([]childEntry, int, bool) {
	start := len(dst)
	for ; g < len(t.ctrl); g++ {
		if len(dst)-start >= max {
			return dst, g, false
		}
		for m := matchFull(t.ctrl[g]); m != 0; m &= m - 1 {
			dst = append(dst, t.entries[g*groupSlots+slotOf(m)])
		}
	}
	return dst, g, true
}

// clone copies the table, replacing each child by copyNode(child). Slots
// keep their places, so nothing is rehashed.
func (t *childTable) clone(copyNode func(*node) *node) childTable {
	cp := childTable{ctrl: make([]uint64, len(t.ctrl)), entries: make([]childEntry, len(t.entries)), n: t.n, dead: t.dead}
	copy(cp.ctrl, t.ctrl)
	copy(cp.entries, t.entries)
	for g, ctrl := range cp.ctrl {
		for m := matchFull(ctrl); m != 0; m &= m - 1 {
			e := &cp.entries[g*groupSlots+slotOf(m)]
			e.n = copyNode(e.n)
		}
	}
	return cp
}
