package znode

import (
	"hash/maphash"
	"math/bits"
)

// childTable is the hash table behind a large childSet: open addressing over
// groups of eight slots, each group with a control word holding a byte per
// slot (empty, deleted, or seven bits of the name's hash), so one probe tests
// eight slots at once — the layout of Go's own maps. It differs from a
// map[string]*node in two ways that matter here:
//
//   - Size. A Go map splits a full 1024-slot table into two half-empty ones,
//     so it runs between 44% and 88% full: at 1000 or 1,000,000 children it
//     spends 51 bytes a child. This table is one array that grows by half
//     and stays between 58% and 88% full (29-43 bytes a child).
//   - Speed. A lookup goes from the childSet straight to the slot array; a
//     Go map adds its header, directory and table, each a likely cache miss
//     when walking a path through cold parents.
//
// The price is that growing rehashes the whole table at once (a parent of a
// million children pauses its writer for some tens of milliseconds every
// time it grows by half). Slot order depends on a per-process hash seed and
// must never show: callers sort, or only count and sum.
type childTable struct {
	groups []childGroup
	n      int // live entries
	dead   int // deleted slots, reclaimed by inserts and rehashing
}

// childGroup is eight slots and their control bytes.
type childGroup struct {
	ctrl    uint64 // byte i (little-endian) is slot i's control byte
	entries [groupSlots]childEntry
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
	// the slots, to a size where the live ones fill 7/12 (growth by half).
	maxLoadNum, maxLoadDen = 7, 8
	newLoadNum, newLoadDen = 7, 12
	// It shrinks when deletes leave fewer than one slot in minLoadDen full.
	minLoadDen = 5
)

// childSeed seeds the name hash. It is random per process so nobody can
// pick names that collide, which is why slot order must never be observable.
var childSeed = maphash.MakeSeed()

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

// slotOf turns a match bit into a slot index.
func slotOf(m uint64) int { return bits.TrailingZeros64(m) >> 3 }

// setCtrl sets slot i's control byte.
func (g *childGroup) setCtrl(i int, c uint8) {
	shift := uint(i) * 8
	g.ctrl = g.ctrl&^(0xff<<shift) | uint64(c)<<shift
}

// newChildTable returns a table sized for n entries.
func newChildTable(n int) childTable {
	groups := (n*newLoadDen/newLoadNum + groupSlots - 1) / groupSlots
	t := childTable{groups: make([]childGroup, max(groups, 1))}
	for i := range t.groups {
		t.groups[i].ctrl = ctrlAllFree
	}
	return t
}

// probe returns the tag and first group of name's probe sequence.
func (t *childTable) probe(name string) (tag uint8, g int) {
	h := maphash.String(childSeed, name)
	hi, _ := bits.Mul64(h, uint64(len(t.groups)))
	return uint8(h & 0x7f), int(hi)
}

// find returns the group and slot holding name, or ok false.
func (t *childTable) find(name string) (grp *childGroup, slot int, ok bool) {
	if t.n == 0 {
		return nil, 0, false
	}
	tag, g := t.probe(name)
	// At least one slot in eight is empty, so this ends well before it
	// has visited every group.
	for range t.groups {
		grp = &t.groups[g]
		for m := matchTag(grp.ctrl, tag); m != 0; m &= m - 1 {
			if i := slotOf(m); grp.entries[i].name == name && grp.entries[i].n != nil {
				return grp, i, true
			}
		}
		if matchEmpty(grp.ctrl) != 0 {
			return nil, 0, false
		}
		if g++; g == len(t.groups) {
			g = 0
		}
	}
	return nil, 0, false
}

// get returns the child called name, or nil.
func (t *childTable) get(name string) *node {
	if grp, i, ok := t.find(name); ok {
		return grp.entries[i].n
	}
	return nil
}

// add inserts a child; name must not be in the table.
func (t *childTable) add(name string, n *node) {
	if (t.n+t.dead+1)*maxLoadDen > len(t.groups)*groupSlots*maxLoadNum {
		t.rehash(t.n + 1)
	}
	t.place(name, n)
}

// place puts an entry in the first free slot of its probe sequence, which
// is where a lookup will find it: every group before that one is full.
func (t *childTable) place(name string, n *node) {
	tag, g := t.probe(name)
	for {
		grp := &t.groups[g]
		if m := matchFree(grp.ctrl); m != 0 {
			i := slotOf(m)
			if uint8(grp.ctrl>>(uint(i)*8)) == ctrlDeleted {
				t.dead--
			}
			grp.setCtrl(i, tag)
			grp.entries[i] = childEntry{name, n}
			t.n++
			return
		}
		if g++; g == len(t.groups) {
			g = 0
		}
	}
}

// remove deletes the child called name, if present, and shrinks the table
// when it has become mostly empty.
func (t *childTable) remove(name string) {
	grp, i, ok := t.find(name)
	if !ok {
		return
	}
	// A group with an empty slot has never been full since the last
	// rehash, so no probe ever went past it and the slot can become empty
	// again; otherwise it must stay a tombstone, or lookups for entries
	// placed further along would stop here.
	if matchEmpty(grp.ctrl) != 0 {
		grp.setCtrl(i, ctrlEmpty)
	} else {
		grp.setCtrl(i, ctrlDeleted)
		t.dead++
	}
	grp.entries[i] = childEntry{}
	t.n--
	if len(t.groups) > 1 && t.n*minLoadDen < len(t.groups)*groupSlots {
		t.rehash(t.n)
	}
}

// rehash moves every entry into a new array sized for n entries.
func (t *childTable) rehash(n int) {
	old := t.groups
	*t = newChildTable(n)
	for gi := range old {
		grp := &old[gi]
		for m := matchFull(grp.ctrl); m != 0; m &= m - 1 {
			e := grp.entries[slotOf(m)]
			t.place(e.name, e.n)
		}
	}
}

// each calls f for every entry, in slot order (random per process).
func (t *childTable) each(f func(name string, n *node)) {
	for gi := range t.groups {
		grp := &t.groups[gi]
		for m := matchFull(grp.ctrl); m != 0; m &= m - 1 {
			e := &grp.entries[slotOf(m)]
			f(e.name, e.n)
		}
	}
}

// clone copies the table, replacing each child by copyNode(child). Slots
// keep their places, so nothing is rehashed.
func (t *childTable) clone(copyNode func(*node) *node) childTable {
	cp := childTable{groups: make([]childGroup, len(t.groups)), n: t.n, dead: t.dead}
	copy(cp.groups, t.groups)
	for gi := range cp.groups {
		grp := &cp.groups[gi]
		for m := matchFull(grp.ctrl); m != 0; m &= m - 1 {
			e := &grp.entries[slotOf(m)]
			e.n = copyNode(e.n)
		}
	}
	return cp
}
