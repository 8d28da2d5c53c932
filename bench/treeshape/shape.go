// Package treeshape lays out a tree of znodes shaped like a real
// ensemble's rather than a grid: a few top-level applications, each with
// config, status, locks and queues subtrees of varying depth, most
// directories holding 1-100 children, a few holding thousands, and one
// widest directory (50,000 children or more at a million znodes). The
// layout is a pure function of (root, nodes, seed): `zkraft bench
// --workload populate --shape realistic` creates it, and scripts/scale
// builds the same one to know its widest directory and its counts.
//
// Depths are counted below the root: applications are at depth 1, their
// subtrees at 2, directories at most at MaxDirDepth and leaves at most one
// deeper.
package treeshape

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// MaxDirDepth is the deepest a directory lies below the root; leaves lie
// at most one deeper.
const MaxDirDepth = 5

// kinds are each application's subtrees: name, the prefix of the
// directories and leaves under it, and its share of the application's
// znodes (relative weights).
var kinds = []struct {
	name, dir, leaf string
	weight          float64
}{
	{"config", "section", "key-", 3},
	{"status", "host", "member-", 4},
	{"locks", "lockgroup", "lock-", 1},
	{"queues", "queue", "item-", 2},
}

// Dir is one directory (a znode with children) of the shape.
type Dir struct {
	Path    string
	Depth   int // below the root: 1 for an application
	Leaves  int // children without children of their own
	Subdirs int
	leaf    string // the prefix of its leaves' names
}

// Children is how many children the directory has.
func (d Dir) Children() int { return d.Leaves + d.Subdirs }

// Shape is a laid-out tree: its directories, parents before children, and
// its leaves, addressed by index so that ten million paths need not be
// held at once.
type Shape struct {
	Root   string
	dirs   []Dir
	starts []int // starts[i]: the index of dirs[i]'s first leaf
	leaves int
	widest int // index in dirs
}

// Widest returns the widest directory's size for a tree of nodes znodes:
// 50,000 children, or 1% of the tree when that is more, but never more
// than a quarter of it.
func Widest(nodes int) int {
	return max(1, min(nodes/4, max(50000, nodes/100)))
}

// New lays out nodes znodes (the root itself not counted) under root.
func New(root string, nodes int, seed uint64) (*Shape, error) {
	apps := 4 + nodes/2_000_000
	fixed := apps * (1 + len(kinds)) // the applications and their subtrees
	if nodes < fixed+1 {
		return nil, fmt.Errorf("treeshape: %d znodes is too few (at least %d)", nodes, fixed+1)
	}
	rng := rand.New(rand.NewPCG(seed, 0x7a6b72616674))
	s := &Shape{Root: root}
	budget := nodes - fixed
	subtrees := make([]int, 0, apps*len(kinds)) // index in s.dirs
	for a := 0; a < apps; a++ {
		app := fmt.Sprintf("%s/app%02d", root, a)
		s.dirs = append(s.dirs, Dir{Path: app, Depth: 1, Subdirs: len(kinds)})
		for _, k := range kinds {
			subtrees = append(subtrees, len(s.dirs))
			s.dirs = append(s.dirs, Dir{Path: app + "/" + k.name, Depth: 2, leaf: k.leaf})
		}
	}
	// The widest directory, a queue of the first application, and a few
	// of thousands, locks and queues of the others.
	wide := min(Widest(nodes), budget-1)
	s.addFixed(subtrees[3], "/widest", wide)
	budget -= wide + 1
	for i := 0; i < 2+nodes/1_000_000; i++ {
		n := 1000 + rng.IntN(9000)
		if n+1 > budget/4 {
			break
		}
		s.addFixed(subtrees[(i*5+2)%len(subtrees)], fmt.Sprintf("/big%02d", i), n)
		budget -= n + 1
	}
	// The rest spread over the subtrees by their kind's weight, give or
	// take half.
	weights := make([]float64, len(subtrees))
	for i := range subtrees {
		weights[i] = kinds[i%len(kinds)].weight * (0.5 + rng.Float64())
	}
	for i, n := range split(budget, weights) {
		s.grow(rng, subtrees[i], kinds[i%len(kinds)].dir, n)
	}
	slices.SortStableFunc(s.dirs, func(a, b Dir) int { return a.Depth - b.Depth })
	s.starts = make([]int, len(s.dirs))
	for i, d := range s.dirs {
		s.starts[i] = s.leaves
		s.leaves += d.Leaves
		if d.Path == root+"/app00/queues/widest" {
			s.widest = i
		}
	}
	return s, nil
}

// addFixed adds a directory of n leaves under s.dirs[parent].
func (s *Shape) addFixed(parent int, name string, n int) {
	p := &s.dirs[parent]
	p.Subdirs++
	s.dirs = append(s.dirs, Dir{Path: p.Path + name, Depth: p.Depth + 1, Leaves: n, leaf: p.leaf})
}

// grow places n znodes below s.dirs[at]: leaves only when few enough (a
// random 1-100, or up to 300 by chance so that depths vary) or at
// MaxDirDepth; else 2-100 subdirectories, sized so that the levels left
// hold the rest in directories of about 50, a few leaves of its own, and
// the rest split between the subdirectories unevenly.
func (s *Shape) grow(rng *rand.Rand, at int, dirPrefix string, n int) {
	d := &s.dirs[at]
	if n <= 0 {
		return
	}
	if d.Depth >= MaxDirDepth || n <= 1+rng.IntN(100) || (n <= 300 && rng.IntN(3) == 0) {
		d.Leaves += n
		return
	}
	levels := float64(MaxDirDepth - d.Depth)
	k := int(math.Ceil(math.Pow(float64(n)/50, 1/levels) * (0.5 + rng.Float64())))
	k = max(2, min(k, 100, n/2))
	own := rng.IntN(min(20, n-2*k) + 1)
	d.Leaves += own
	d.Subdirs += k
	path, depth := d.Path, d.Depth // d moves when s.dirs grows
	weights := make([]float64, k)
	for i := range weights {
		weights[i] = rng.ExpFloat64() + 0.05
	}
	for i, m := range split(n-own-k, weights) {
		s.dirs = append(s.dirs, Dir{Path: fmt.Sprintf("%s/%s%02d", path, dirPrefix, i), Depth: depth + 1, leaf: s.dirs[at].leaf})
		s.grow(rng, len(s.dirs)-1, dirPrefix, m)
	}
}

// split divides n into len(weights) parts in proportion to weights.
func split(n int, weights []float64) []int {
	var sum float64
	for _, w := range weights {
		sum += w
	}
	parts := make([]int, len(weights))
	left := n
	for i, w := range weights {
		parts[i] = int(float64(n) * w / sum)
		left -= parts[i]
	}
	for i := 0; left > 0; i = (i + 1) % len(parts) {
		parts[i]++
		left--
	}
	return parts
}

// Dirs are the directories, shallower ones first (every directory's
// parent comes before it). The caller must not change them.
func (s *Shape) Dirs() []Dir { return s.dirs }

// Levels are the directories' paths grouped by depth, shallowest first:
// each group can be created all at once after the one before it.
func (s *Shape) Levels() [][]string {
	var levels [][]string
	for _, d := range s.dirs {
		if len(levels) < d.Depth {
			levels = append(levels, nil)
		}
		levels[d.Depth-1] = append(levels[d.Depth-1], d.Path)
	}
	return levels
}

// Leaves is how many leaves the shape has.
func (s *Shape) Leaves() int { return s.leaves }

// Nodes is how many znodes the shape has below its root: directories and
// leaves (New's nodes).
func (s *Shape) Nodes() int { return len(s.dirs) + s.leaves }

// Leaf is the path of leaf i (0 <= i < Leaves()).
func (s *Shape) Leaf(i int) string {
	// The last directory starting at or before i: one without leaves
	// starts where the next one does, so it is never that one.
	d := sort.Search(len(s.starts), func(j int) bool { return s.starts[j] > i }) - 1
	return fmt.Sprintf("%s/%s%07d", s.dirs[d].Path, s.dirs[d].leaf, i-s.starts[d])
}

// Widest is the directory with the most children.
func (s *Shape) Widest() Dir { return s.dirs[s.widest] }
