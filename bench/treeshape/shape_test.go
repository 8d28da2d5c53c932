package treeshape

import (
	"strings"
	"testing"
)

// TestShape checks, at several sizes, that the shape holds exactly the
// znodes asked for, that every directory's parent comes before it and
// that its counts match the paths, that depths stay within bounds, that
// the widest directory is the widest, and that most directories are
// small but some hold thousands.
func TestShape(t *testing.T) {
	for _, nodes := range []int{1000, 100_000, 1_000_000} {
		s, err := New("/r/tree", nodes, 7)
		if err != nil {
			t.Fatal(err)
		}
		if s.Nodes() != nodes {
			t.Errorf("%d: Nodes() = %d", nodes, s.Nodes())
		}
		children := map[string]int{"/r/tree": 0}
		small, thousands := 0, 0
		for _, d := range s.Dirs() {
			parent := d.Path[:strings.LastIndexByte(d.Path, '/')]
			if _, ok := children[parent]; !ok {
				t.Fatalf("%d: %s comes before its parent", nodes, d.Path)
			}
			children[parent]++
			children[d.Path] += d.Leaves
			if d.Depth < 1 || d.Depth > MaxDirDepth || strings.Count(d.Path, "/")-2 != d.Depth {
				t.Errorf("%d: %s at depth %d", nodes, d.Path, d.Depth)
			}
			if c := d.Children(); c >= 1 && c <= 100 {
				small++
			} else if c >= 1000 {
				thousands++
			}
			if d.Children() > s.Widest().Children() {
				t.Errorf("%d: %s has %d children, more than the widest %s (%d)", nodes, d.Path, d.Children(), s.Widest().Path, s.Widest().Children())
			}
		}
		for _, d := range s.Dirs() {
			if children[d.Path] != d.Children() {
				t.Errorf("%d: %s has %d children by path, %d by count", nodes, d.Path, children[d.Path], d.Children())
			}
		}
		if want := Widest(nodes); s.Widest().Leaves != want {
			t.Errorf("%d: widest has %d leaves, want %d", nodes, s.Widest().Leaves, want)
		}
		if nodes >= 100_000 && (small < len(s.Dirs())*3/4 || thousands < 3) {
			t.Errorf("%d: %d of %d directories have 1-100 children, %d have thousands", nodes, small, len(s.Dirs()), thousands)
		}
		levels := s.Levels()
		if nodes >= 100_000 && len(levels) != MaxDirDepth {
			t.Errorf("%d: directories at %d depths, want %d", nodes, len(levels), MaxDirDepth)
		}
	}
}

// TestLeaves checks that leaf paths are distinct, lie in their
// directories and fill each directory's count.
func TestLeaves(t *testing.T) {
	s, err := New("/r/tree", 100_000, 1)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	per := map[string]int{}
	for i := 0; i < s.Leaves(); i++ {
		p := s.Leaf(i)
		if seen[p] {
			t.Fatalf("leaf %d: %s twice", i, p)
		}
		seen[p] = true
		per[p[:strings.LastIndexByte(p, '/')]]++
	}
	for _, d := range s.Dirs() {
		if per[d.Path] != d.Leaves {
			t.Errorf("%s: %d leaf paths, %d leaves", d.Path, per[d.Path], d.Leaves)
		}
	}
}

// TestDeterministic checks that the same arguments lay out the same tree
// (scripts/scale relies on it to find the widest directory).
func TestDeterministic(t *testing.T) {
	a, _ := New("/x", 50_000, 3)
	b, _ := New("/x", 50_000, 3)
	if len(a.Dirs()) != len(b.Dirs()) || a.Leaf(a.Leaves()-1) != b.Leaf(b.Leaves()-1) || a.Widest() != b.Widest() {
		t.Error("two layouts of the same arguments differ")
	}
	if _, err := New("/x", 10, 3); err == nil {
		t.Error("10 znodes: no error")
	}
}
