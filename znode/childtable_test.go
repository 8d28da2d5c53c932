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
	if len(tb.entries) != len(tb.ctrl)*groupSlots {
		t.Fatalf("%d entries for %d groups", len(tb.entries), len(tb.ctrl))
	}
	for gi, ctrl := range tb.ctrl {
		for i := 0; i < groupSlots; i++ {
			e := tb.entries[gi*groupSlots+i]
			switch c := ctrlByte(ctrl, i); {
			case c == ctrlEmpty:
				if e != (childEntry{}) {
					t.Fatalf("empty slot %d/%d holds %q", gi, i, e.name)
				}
			case c == ctrlDeleted:
				dead++
				if e != (childEntry{}) {
					t.Fatalf("deleted slot %d/%d holds %q", gi, i, e.name)
				}
			case c < 0x80:
				live++
				if e.n == nil {
					t.Fatalf("live slot %d/%d without a node", gi, i)
				}
				if tag, _ := tb.probe(hashName(e.name)); tag != c {
					t.Fatalf("%q: tag %#x want %#x", e.name, c, tag)
				}
				if tb.get(e.name, hashName(e.name)) != e.n {
					t.Fatalf("%q not found", e.name)
				}
			default:
				t.Fatalf("bad control byte %#x", c)
			}
		}
	}
	if live != int(tb.n) || dead != int(tb.dead) {
		t.Fatalf("counts %d/%d, control bytes say %d/%d", tb.n, tb.dead, live, dead)
	}
	if slots := len(tb.entries); (live+dead)*maxLoadDen > slots*maxLoadNum {
		t.Fatalf("%d live + %d deleted in %d slots", live, dead, slots)
	}
}

func TestControlMatches(t *testing.T) {
	ctrl := uint64(ctrlAllFree)
	ctrl = withCtrl(ctrl, 0, 0x12)
	ctrl = withCtrl(ctrl, 3, ctrlDeleted)
	ctrl = withCtrl(ctrl, 5, 0x12)
	ctrl = withCtrl(ctrl, 7, 0x7f)
	slots := func(m uint64) (out []int) {
		for ; m != 0; m &= m - 1 {
			out = append(out, slotOf(m))
		}
		return out
	}
	if got := fmt.Sprint(slots(matchEmpty(ctrl))); got != "[1 2 4 6]" {
		t.Fatalf("empty %s", got)
	}
	if got := fmt.Sprint(slots(matchFree(ctrl))); got != "[1 2 3 4 6]" {
		t.Fatalf("free %s", got)
	}
	if got := fmt.Sprint(slots(matchFull(ctrl))); got != "[0 5 7]" {
		t.Fatalf("full %s", got)
	}
	// matchTag may over-report, never under-report.
	for tag := uint8(0); tag < 0x80; tag++ {
		m := matchTag(ctrl, tag)
		for i := 0; i < groupSlots; i++ {
			if ctrlByte(ctrl, i) == tag && m&(0x80<<(8*i)) == 0 {
				t.Fatalf("tag %#x missed in slot %d", tag, i)
			}
		}
	}
	if bits.OnesCount64(matchTag(ctrl, 0x12)) < 2 {
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
		tb.add(name, n, hashName(name))
		model[name] = n
		names = append(names, name)
	}
	del := func() {
		i := rng.IntN(len(names))
		name := names[i]
		names[i] = names[len(names)-1]
		names = names[:len(names)-1]
		tb.remove(name, hashName(name))
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
			if int(tb.n) != len(model) {
				t.Fatalf("n %d want %d", tb.n, len(model))
			}
		}
		checkChildTable(t, &tb)
		for k, v := range model {
			if tb.get(k, hashName(k)) != v {
				t.Fatalf("get %s", k)
			}
		}
		for i := 0; i < 100; i++ {
			if x := fmt.Sprintf("x%d", i); tb.get(x, hashName(x)) != nil {
				t.Fatal("found an absent name")
			}
		}
	}
	phase(5000, 100) // grow
	grown := len(tb.ctrl)
	for i := 0; i < 20; i++ {
		phase(1000, 50) // churn at a steady size
	}
	if len(tb.ctrl) > grown*2 {
		t.Fatalf("churn grew the table from %d to %d groups", grown, len(tb.ctrl))
	}
	phase(4900, 0) // shrink
	if len(tb.entries) > len(model)*minLoadDen*2+groupSlots {
		t.Fatalf("%d entries left in %d slots", len(model), len(tb.entries))
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
		k := fmt.Sprintf("k%d", i)
		tb.add(k, &node{version: int32(i)}, hashName(k))
	}
	for i := 0; i < 500; i += 3 {
		k := fmt.Sprintf("k%d", i)
		tb.remove(k, hashName(k))
	}
	cp := tb.clone(func(n *node) *node { x := *n; return &x })
	checkChildTable(t, &cp)
	if cp.n != tb.n {
		t.Fatalf("clone has %d entries, original %d", cp.n, tb.n)
	}
	tb.each(func(name string, n *node) {
		c := cp.get(name, hashName(name))
		if c == nil || c == n || c.version != n.version {
			t.Fatalf("clone entry %s", name)
		}
	})
	cp.remove("k1", hashName("k1"))
	cp.add("new", &node{}, hashName("new"))
	if tb.get("k1", hashName("k1")) == nil || tb.get("new", hashName("new")) != nil {
		t.Fatal("clone not independent")
	}
}
