package znode

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"
)

// TestNodeSize guards the node struct's size class: 80 bytes, not 96.
func TestNodeSize(t *testing.T) {
	if s := unsafe.Sizeof(node{}); s > 80 {
		t.Fatalf("node is %d bytes, want at most 80", s)
	}
}

// TestNodeMeta checks that kind and ACL reference share the meta word
// without disturbing each other.
func TestNodeMeta(t *testing.T) {
	var n node
	for _, k := range []nodeKind{kindPersistent, kindEphemeral, kindContainer, kindTTL} {
		for _, r := range []aclRef{0, 1, 12345, maxACLLists - 1} {
			n.setKind(k)
			n.setACL(r)
			if n.kind() != k || n.acl() != r {
				t.Fatalf("set %d/%d, got %d/%d", k, r, n.kind(), n.acl())
			}
			n.setACL(r)
			n.setKind(k)
			if n.kind() != k || n.acl() != r {
				t.Fatalf("set %d/%d, got %d/%d", r, k, n.kind(), n.acl())
			}
		}
	}
}

// checkChildSet verifies a child set's representation.
func checkChildSet(t *testing.T, c *childSet) {
	t.Helper()
	switch {
	case c.big() && c.list != nil, c.shards() != nil && c.table.ctrl != nil:
		t.Fatal("child set holds two representations")
	case c.table.ctrl != nil && (c.table.n <= smallChildren/2 || c.table.n > maxTableEntries):
		t.Fatalf("table of %d children", c.table.n)
	case c.shards() != nil && c.shards().n < maxTableEntries/4:
		t.Fatalf("shards of %d children not merged", c.shards().n)
	case !c.big() && len(c.list) > smallChildren:
		t.Fatalf("slice of %d children not grown into a table", len(c.list))
	case !c.big() && !slices.IsSortedFunc(c.list, cmpEntry):
		t.Fatal("small child set not sorted")
	case c.len() == 0:
		t.Fatal("empty child set kept")
	}
	if c.table.ctrl != nil {
		checkChildTable(t, &c.table)
	}
	if c.shards() != nil {
		sum := 0
		for i := range c.shards().tables {
			tb := &c.shards().tables[i]
			checkChildTable(t, tb)
			sum += int(tb.n)
			tb.each(func(name string, _ *node) {
				if shardOf(hashName(name)) != i {
					t.Fatalf("%q in shard %d", name, i)
				}
			})
		}
		if sum != c.shards().n {
			t.Fatalf("shards hold %d, count %d", sum, c.shards().n)
		}
	}
	names := c.names(nil)
	if len(names) != c.len() || !slices.IsSorted(names) {
		t.Fatalf("names %v of a set of %d", names, c.len())
	}
	for i, e := range c.sorted(nil) {
		if e.name != names[i] || c.get(e.name) != e.n || e.n == nil {
			t.Fatalf("entry %d: %q", i, e.name)
		}
	}
}

// TestChildSetModel drives a child set with random adds and removes
// around and far above the slice/map threshold and compares it with a map.
func TestChildSetModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	c := &childSet{}
	model := map[string]*node{}
	for step := 0; step < 20000; step++ {
		// Drift the target size up and down through the threshold.
		limit := 3 + (step/500)%4*smallChildren
		name := fmt.Sprintf("c%d", rng.IntN(limit+1))
		if _, ok := model[name]; ok && rng.IntN(2) == 0 {
			c.remove(name)
			delete(model, name)
		} else if !ok {
			n := &node{}
			c.add(name, n)
			model[name] = n
		}
		if c.len() != len(model) {
			t.Fatalf("step %d: len %d want %d", step, c.len(), len(model))
		}
		if len(model) > 0 {
			checkChildSet(t, c)
		}
		for k, v := range model {
			if c.get(k) != v {
				t.Fatalf("step %d: get %s", step, k)
			}
		}
		if c.get("absent") != nil {
			t.Fatal("found an absent child")
		}
	}
}

// TestChildSetShards grows a set past one table into shards, churns it,
// and shrinks it back into a table and a slice.
func TestChildSetShards(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	c := &childSet{}
	model := map[string]*node{}
	var names []string
	add := func() {
		name := fmt.Sprintf("s%d", rng.Uint64())
		if _, dup := model[name]; dup {
			return
		}
		n := &node{}
		c.add(name, n)
		model[name] = n
		names = append(names, name)
	}
	del := func() {
		i := rng.IntN(len(names))
		name := names[i]
		names[i] = names[len(names)-1]
		names = names[:len(names)-1]
		c.remove(name)
		delete(model, name)
	}
	check := func(what string) {
		t.Helper()
		if c.len() != len(model) {
			t.Fatalf("%s: len %d want %d", what, c.len(), len(model))
		}
		checkChildSet(t, c)
		for k, v := range model {
			if c.get(k) != v {
				t.Fatalf("%s: get %s", what, k)
			}
		}
		if c.get("absent") != nil {
			t.Fatalf("%s: found an absent child", what)
		}
	}
	for len(model) < maxTableEntries {
		add()
	}
	if c.table.ctrl == nil || c.shards() != nil {
		t.Fatal("a full table is not a table")
	}
	add()
	if c.shards() == nil {
		t.Fatal("no shards past maxTableEntries")
	}
	check("sharded")
	for len(model) < 3*maxTableEntries {
		add()
	}
	for i := 0; i < 20000; i++ {
		if rng.IntN(2) == 0 {
			add()
		} else {
			del()
		}
	}
	check("churned")
	for len(model) >= maxTableEntries/4 {
		del()
	}
	if c.shards() != nil || c.table.ctrl == nil {
		t.Fatal("shards not merged")
	}
	check("merged")
	for len(model) > smallChildren/2 {
		del()
	}
	if c.big() {
		t.Fatal("table not turned back into a slice")
	}
	check("small")
	cp := c.clone(func(n *node) *node { return n })
	checkChildSet(t, &cp)
}

// TestChildSetPromoteAndShrink walks a set through slice -> map -> slice.
func TestChildSetPromoteAndShrink(t *testing.T) {
	c := &childSet{}
	nodes := map[string]*node{}
	name := func(i int) string { return fmt.Sprintf("n%02d", i) }
	// Added in reverse so the slice has to insert at the front.
	for i := smallChildren; i >= 0; i-- {
		nodes[name(i)] = &node{}
		c.add(name(i), nodes[name(i)])
		if i > 0 && c.big() {
			t.Fatalf("map with %d children", c.len())
		}
	}
	if !c.big() || c.list != nil || c.len() != smallChildren+1 {
		t.Fatalf("%d children not in a map", c.len())
	}
	checkChildSet(t, c)
	for i := smallChildren; i >= smallChildren/2; i-- {
		if !c.big() {
			t.Fatalf("shrunk early at %d", c.len())
		}
		if left := c.remove(name(i)); left != i {
			t.Fatalf("remove left %d want %d", left, i)
		}
	}
	if c.big() || c.len() != smallChildren/2 {
		t.Fatalf("not shrunk at %d children", c.len())
	}
	checkChildSet(t, c)
	c.add(name(4), nodes[name(4)]) // back to five, still a slice
	if got, want := c.names(nil), []string{"n00", "n01", "n02", "n03", "n04"}; c.big() || !slices.Equal(got, want) {
		t.Fatalf("names %v want %v", got, want)
	}
	for _, i := range []int{0, 2, 4} { // first, middle, last
		c.remove(name(i))
		checkChildSet(t, c)
		if c.get(name(i)) != nil {
			t.Fatalf("%s still present", name(i))
		}
	}
	if got := c.names(nil); !slices.Equal(got, []string{"n01", "n03"}) || c.get(name(1)) != nodes[name(1)] || c.get(name(3)) != nodes[name(3)] {
		t.Fatalf("names %v", got)
	}
	c.remove("missing")
	if c.remove(name(1)) != 1 || c.remove(name(3)) != 0 {
		t.Fatal("remove counts")
	}
}

// TestChildSetSortedLargeAndClone lists a large set in order and checks
// that a clone is independent.
func TestChildSetSortedLargeAndClone(t *testing.T) {
	c := &childSet{}
	perm := rand.New(rand.NewPCG(5, 6)).Perm(1000)
	for _, i := range perm {
		c.add(fmt.Sprintf("k%04d", i), &node{version: int32(i)})
	}
	names := c.names(nil)
	for i, n := range names {
		if n != fmt.Sprintf("k%04d", i) {
			t.Fatalf("names[%d] = %s", i, n)
		}
	}
	copies := 0
	cp := c.clone(func(n *node) *node { copies++; x := *n; return &x })
	if copies != 1000 {
		t.Fatalf("%d copies", copies)
	}
	for i, e := range cp.sorted(nil) {
		if e.n.version != int32(i) || e.n == c.get(e.name) {
			t.Fatalf("clone entry %s", e.name)
		}
	}
	cp.remove("k0000")
	if c.get("k0000") == nil || cp.get("k0000") != nil {
		t.Fatal("clone not independent")
	}
	small := &childSet{}
	small.add("b", &node{})
	small.add("a", &node{})
	scp := small.clone(func(n *node) *node { x := *n; return &x })
	scp.remove("a")
	if small.len() != 2 || scp.len() != 1 {
		t.Fatal("small clone not independent")
	}
}

// TestLookupMalformed checks that malformed paths name no node.
func TestLookupMalformed(t *testing.T) {
	h := newHarness(t, Options{})
	h.mustCreate("/a", nil, 0)
	h.mustCreate("/a/b", nil, 0)
	for _, p := range []string{"/", ""} {
		if h.tree.lookup(p) != h.tree.root {
			t.Fatalf("%q is not the root", p)
		}
	}
	if h.tree.lookup("/a/b") == nil || h.tree.lookup("/a") == nil {
		t.Fatal("existing nodes not found")
	}
	for _, p := range []string{"a", "a/b", "/a/", "//a", "/a//b", "/a/b/", "/a/./b", "//", "x", "/a/b/c", "/zookeeper/"} {
		if h.tree.lookup(p) != nil {
			t.Fatalf("%q found", p)
		}
		if _, err := h.tree.Exists(p, nil); err == nil {
			t.Fatalf("Exists(%q) succeeded", p)
		}
	}
}
