package console

import (
	"fmt"
	"net/http"
	"runtime"
	"testing"

	"github.com/go-zookeeper/zk"
)

// TestSearchListsNoMoreThanItShows: a search answers at most
// maxSearchHits paths, breadth first. It used to list every directory it
// reached and queue all their children, though it could show at most
// maxSearchHits of them: under /s with 200 directories of 300 children,
// a search for /s listed 199 directories and queued 59,700 paths to show
// 200. It now queues no more paths than it may still show, and once none
// fits asks of the next only whether it has children (for Truncated),
// without listing it. The answer is the same.
func TestSearchListsNoMoreThanItShows(t *testing.T) {
	addr := startZK(t)
	zc := dialZK(t, addr)
	open := zk.WorldACL(zk.PermAll)
	var ops []any
	ops = append(ops, &zk.CreateRequest{Path: "/s", Acl: open})
	for d := range 200 {
		ops = append(ops, &zk.CreateRequest{Path: fmt.Sprintf("/s/d%03d", d), Acl: open})
		for k := range 300 {
			ops = append(ops, &zk.CreateRequest{Path: fmt.Sprintf("/s/d%03d/k%03d", d, k), Acl: open})
		}
	}
	for len(ops) > 0 {
		n := min(len(ops), 1000)
		if _, err := zc.Multi(ops[:n]...); err != nil {
			t.Fatal(err)
		}
		ops = ops[n:]
	}
	b := newBrowser(t, startConsole(t, addr, false))
	b.login("", "")

	b.get("/api/search?prefix=/s") // warm up the login's connection
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	st, out := b.get("/api/search?prefix=/s")
	runtime.ReadMemStats(&after)
	if st != http.StatusOK {
		t.Fatalf("search: %d %v", st, out)
	}
	paths, _ := out["paths"].([]any)
	if len(paths) != maxSearchHits || paths[0] != "/s" || paths[1] != "/s/d000" ||
		paths[maxSearchHits-1] != "/s/d198" || out["truncated"] != true {
		t.Fatalf("search for /s: %d paths, first %v, last %v, truncated %v",
			len(paths), paths[:min(2, len(paths))], paths[len(paths)-1:], out["truncated"])
	}
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("a search showing %d of 60,201 paths allocated %d KiB", len(paths), allocated>>10)
	if allocated > 2<<20 {
		t.Errorf("a search showing %d paths allocated %d KiB: it listed directories it could not show", len(paths), allocated>>10)
	}

	// The same answers as before for the rest: /s/ has 200 directories
	// (all shown, and children below them), /s/d005/k 300 leaves (200
	// shown), /s/d007/k29 10 leaves.
	for _, c := range []struct {
		prefix    string
		n         int
		truncated bool
	}{{"/s/", maxSearchHits, true}, {"/s/d005/k", maxSearchHits, true}, {"/s/d007/k29", 10, false}} {
		st, out := b.get("/api/search?prefix=" + c.prefix)
		if paths, _ := out["paths"].([]any); st != http.StatusOK || len(paths) != c.n || out["truncated"] != c.truncated {
			t.Errorf("search for %s: %d, %d paths, truncated %v", c.prefix, st, len(paths), out["truncated"])
		}
	}
}
