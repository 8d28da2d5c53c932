package znode

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// checkChildTable verifies a table's bookkeeping: the counts match the
// control bytes, the load stays under 7/8, deleted slots only sit in full
// groups, and every entry is found from its hash.
func checkChildTable(t *testing.T, tb *childTable) {
	t.Helper()
	live, dead := 0, 0
	for gi := range tb.groups {
		g := &tb.groups[gi]
		for i := 0; i < groupSlots; i++ {
			switch c := uint8(g.ctrl >> (8 * i)); {
			case c == ctrlEmpty:
				if g.entries[i] != (childEntry{}) {
					t.Fatalf("empty slot %d/%d holds %q", gi, i, g.entries[i].name)
				}
			case c == ctrlDeleted:
				dead++
				if g.entries[i] != (childEntry{}) {
					t.Fatalf("deleted slot %d/%d holds %q", gi, i, g.entries[i].name)
				}
			case c < 0x80:
				live++
				e := g.entries[i]
				if e.n == nil {
					t.Fatalf("live slot %d/%d without a node", gi, i)
				}
				if tag, _ := tb.probe(e.name); tag != c {
					t.Fatalf("%q: tag %#x want %#x", e.name, c, tag)
				}
				if tb.get(e.name) != e.n {
					t.Fatalf("%q not found", e.name)
				}
			default:
				t.Fatalf("bad control byte %#x", c)
			}
		}
	}
	if live != tb.n || dead != tb.dead {
		t.Fatalf("counts %d/%d, control bytes say %d/%d", tb.n, tb.dead, live, dead)
	}
	if slots := len(tb.groups) * groupSlots; (live+dead)*maxLoadDen > slots*maxLoadNum {
		t.Fatalf("%d live + %d deleted in %d slots", live, dead, slots)
	}
}

func TestControlMatches(t *testing.T) {
	var g childGroup
	g.ctrl = ctrlAllFree
	g.setCtrl(0, 0x12)
	g.setCtrl(3, ctrlDeleted)
	g.setCtrl(5, 0x12)
	g.setCtrl(7, 0x7f)
	slots := func(m uint64) (out []int) {
		for ; m != 0; m &= m - 1 {
			out = append(out, slotOf(m))
		}
		return out
	}
	if got := fmt.Sprint(slots(matchEmpty(g.ctrl))); got != "[1 2 4 6]" {
		t.Fatalf("empty %s", got)
	}
	if got := fmt.Sprint(slots(matchFree(g.ctrl))); got != "[1 2 3 4 6]" {
		t.Fatalf("free %s", got)
	}
	if got := fmt.Sprint(slots(matchFull(g.ctrl))); got != "[0 5 7]" {
		t.Fatalf("full %s", got)
	}
	// matchTag may over-report, never under-report.
	for tag := uint8(0); tag < 0x80; tag++ {
		m := matchTag(g.ctrl, tag)
		for i := 0; i < groupSlots; i++ {
			if uint8(g.ctrl>>(8*i)) == tag && m&(0x80<<(8*i)) == 0 {
				t.Fatalf("tag %#x missed in slot %d", tag, i)
			}
		}
	}
	if bits.OnesCount64(matchTag(g.ctrl, 0x12)) < 2 {
		t.Fatal("tag 0x12 under-reported")
	}
}

// TestChildTableModel grows a table to thousands of entries, churns it
// (deleted slots, rehashing in place) and shrinks it, comparing it with a
// map throughout.
func TestChildTableModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	tb := newChildTable(0)
	model := map[string]*node{}
	var names []string // the model's keys, for picking victims
	add := func(name string) {
		n := &node{}
		tb.add(name, n)
		model[name] = n
		names = append(names, name)
	}
	del := func() {
		i := rng.IntN(len(names))
		name := names[i]
		names[i] = names[len(names)-1]
		names = names[:len(names)-1]
		tb.remove(name)
		delete(model, name)
	}
	next := 0
	phase := func(steps, addPct int) {
		for s := 0; s < steps; s++ {
			if len(names) == 0 || rng.IntN(100) < addPct {
				add(fmt.Sprintf("n%d", next))
				next++
			} else {
				del()
			}
			if tb.n != len(model) {
				t.Fatalf("n %d want %d", tb.n, len(model))
			}
		}
		checkChildTable(t, &tb)
		for k, v := range model {
			if tb.get(k) != v {
				t.Fatalf("get %s", k)
			}
		}
		for i := 0; i < 100; i++ {
			if tb.get(fmt.Sprintf("x%d", i)) != nil {
				t.Fatal("found an absent name")
			}
		}
	}
	phase(5000, 100) // grow
	grown := len(tb.groups)
	for i := 0; i < 20; i++ {
		phase(1000, 50) // churn at a steady size
	}
	if len(tb.groups) > grown*2 {
		t.Fatalf("churn grew the table from %d to %d groups", grown, len(tb.groups))
	}
	phase(4900, 0) // shrink
	if len(tb.groups)*groupSlots > len(model)*minLoadDen*2+groupSlots {
		t.Fatalf("%d entries left in %d groups", len(model), len(tb.groups))
	}
	// Empty it completely and start again.
	for len(names) > 0 {
		del()
	}
	checkChildTable(t, &tb)
	phase(300, 100)
}

// TestChildTableClone checks a clone keeps every entry, copies the nodes
// and is independent of the original.
func TestChildTableClone(t *testing.T) {
	tb := newChildTable(0)
	for i := 0; i < 500; i++ {
		tb.add(fmt.Sprintf("k%d", i), &node{version: int32(i)})
	}
	for i := 0; i < 500; i += 3 {
		tb.remove(fmt.Sprintf("k%d", i))
	}
	cp := tb.clone(func(n *node) *node { x := *n; return &x })
	checkChildTable(t, &cp)
	if cp.n != tb.n {
		t.Fatalf("clone has %d entries, original %d", cp.n, tb.n)
	}
	tb.each(func(name string, n *node) {
		c := cp.get(name)
		if c == nil || c == n || c.version != n.version {
			t.Fatalf("clone entry %s", name)
		}
	})
	cp.remove("k1")
	cp.add("new", &node{})
	if tb.get("k1") == nil || tb.get("new") != nil {
		t.Fatal("clone not independent")
	}
}
