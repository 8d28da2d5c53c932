package archtest

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/zkraft/zkraft/"

// layers are the repository's folders from the bottom up: a package may
// import packages of a lower layer, or of its own group, never of a
// higher one or of another group of its layer. Every package's folder
// must be listed (the longest prefix decides).
var layers = [][]string{
	{"jute", "internal/base", "internal/security", "internal/cli"},
	{"acl"},
	{"znode"},
	{"watches"},
	{"backend"},
	{"ensemble", "internal/zookeeper"},
	{"session"},
	{"operator", "console"},
	{"shell", "shell/recipes", "bench"},
	{"server"},
	{"cmd"},
	// Test and benchmark helpers, then the tests, tools and benchmarks
	// that use them: anything below.
	{"internal/testing"},
	{"scripts", "e2e", "packaging"},
}

// groupOf returns the group (the layers entry) of a package path relative
// to the module, and its layer.
func groupOf(rel string) (string, int, bool) {
	best, layer := "", -1
	for i, groups := range layers {
		for _, g := range groups {
			if (rel == g || strings.HasPrefix(rel, g+"/")) && len(g) > len(best) {
				best, layer = g, i
			}
		}
	}
	return best, layer, layer >= 0
}

// packages returns every package directory of the module, relative.
func packages(t *testing.T) []string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
			return filepath.SkipDir
		}
		if p != root {
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir // a module of its own
			}
		}
		if matches, _ := filepath.Glob(filepath.Join(p, "*.go")); len(matches) > 0 {
			rel, _ := filepath.Rel(root, p)
			dirs = append(dirs, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(dirs)
	return dirs
}

// imports returns the module's packages rel imports outside its tests.
func imports(t *testing.T, rel string) []string {
	t.Helper()
	pkg, err := build.ImportDir(filepath.Join("..", "..", "..", rel), 0)
	if err != nil {
		if _, ok := err.(*build.NoGoError); ok {
			return nil
		}
		t.Fatalf("%s: %v", rel, err)
	}
	var out []string
	for _, imp := range pkg.Imports {
		if after, ok := strings.CutPrefix(imp, module); ok {
			out = append(out, after)
		}
	}
	return out
}

// TestLayers: no package imports one of a higher layer, or of another
// group of its own layer, outside its tests.
func TestLayers(t *testing.T) {
	for _, rel := range packages(t) {
		g, layer, ok := groupOf(rel)
		if !ok {
			t.Errorf("%s: in no layer of archtest's list", rel)
			continue
		}
		for _, imp := range imports(t, rel) {
			ig, ilayer, ok := groupOf(imp)
			switch {
			case !ok:
				t.Errorf("%s imports %s, which is in no layer", rel, imp)
			case ig == g:
			case ilayer >= layer:
				t.Errorf("%s (layer %d, %s) imports %s (layer %d, %s): an upward arrow", rel, layer, g, imp, ilayer, ig)
			}
		}
	}
}

// assemblers are the only packages that import the ensemble member and
// open one: everything else reads a member through backend's interfaces.
var assemblers = []string{"server", "cmd", "internal/testing", "scripts", "e2e"}

// TestOnlyTheAssemblyImportsEnsemble: session, operator, the metrics, the
// ZooKeeper learner and observer see a member only as a backend.Backend or
// backend.Member; only ensemble/ imports hashicorp/raft.
func TestOnlyTheAssemblyImportsEnsemble(t *testing.T) {
	for _, rel := range packages(t) {
		if rel == "ensemble" || strings.HasPrefix(rel, "ensemble/") {
			continue
		}
		assembler := false
		for _, a := range assemblers {
			assembler = assembler || rel == a || strings.HasPrefix(rel, a+"/")
		}
		pkg, err := build.ImportDir(filepath.Join("..", "..", "..", rel), 0)
		if err != nil {
			continue
		}
		for _, imp := range pkg.Imports {
			if strings.HasPrefix(imp, "github.com/hashicorp/raft") {
				t.Errorf("%s imports %s: only ensemble/ may", rel, imp)
			}
			if (imp == module+"ensemble" || strings.HasPrefix(imp, module+"ensemble/")) && !assembler {
				t.Errorf("%s imports %s: only the assembly (%s) may", rel, imp, strings.Join(assemblers, ", "))
			}
		}
	}
}
