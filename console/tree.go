package console

import (
	"context"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/cli/zkjson"
)

// Paging of large directories and bounds on walks.
const (
	defaultPage   = 100
	maxPage       = 1000
	maxSearchHits = 200
	maxSubtree    = 1000
	statWorkers   = 16
)

// childJSON is one child in a listing: its name and, when the console may
// read it, how many children it has (so the page knows whether to offer
// to expand it).
type childJSON struct {
	Name        string `json:"name"`
	NumChildren int32  `json:"numChildren"` // -1: unknown (refused or gone)
	Ephemeral   bool   `json:"ephemeral,omitempty"`
}

// childrenJSON is one page of a directory.
type childrenJSON struct {
	Path     string      `json:"path"`
	Total    int         `json:"total"`
	Offset   int         `json:"offset"`
	Children []childJSON `json:"children"`
}

// queryPath is the request's path parameter, "/" when absent.
func queryPath(r *http.Request) string {
	p := r.URL.Query().Get("path")
	if p == "" {
		return "/"
	}
	return p
}

// intParam reads a non-negative integer query parameter.
func intParam(r *http.Request, name string, def int) int {
	v, err := strconv.Atoi(r.URL.Query().Get(name))
	if err != nil || v < 0 {
		return def
	}
	return v
}

// childPath joins a directory and a child name.
func childPath(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// handleChildren lists one page of a directory (sorted, as zkraft sends
// them) with each child's child count.
func (c *Console) handleChildren(w http.ResponseWriter, r *http.Request) {
	l, dir := current(r), queryPath(r)
	t := &turn{c: c}
	defer t.end()
	if err := t.forListing(r.Context(), l.zk, dir); err != nil {
		failBusy(w, err)
		return
	}
	names, _, err := l.zk.Children(dir)
	if err != nil {
		failZK(w, err)
		return
	}
	sortNames(names)
	total := len(names)
	offset := min(intParam(r, "offset", 0), total)
	limit := min(max(intParam(r, "limit", defaultPage), 1), maxPage)
	page := slices.Clone(names[offset:min(offset+limit, total)])
	t.end() // the listing is let go: the page's stats need no turn
	out := childrenJSON{Path: dir, Total: total, Offset: offset, Children: make([]childJSON, len(page))}
	forEach(len(page), func(i int) {
		out.Children[i] = childJSON{Name: page[i], NumChildren: -1}
		if ok, st, err := l.zk.Exists(childPath(dir, page[i])); err == nil && ok {
			out.Children[i].NumChildren = st.NumChildren
			out.Children[i].Ephemeral = st.EphemeralOwner != 0
		}
	})
	writeJSON(w, http.StatusOK, out)
}

// forEach runs f(0..n-1) on up to statWorkers goroutines (go-zookeeper
// pipelines concurrent requests on its one connection).
func forEach(n int, f func(int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(n, statWorkers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// nodeJSON is one znode as the page shows it. Data is base64 (JSON's
// []byte); the page renders it as text, JSON or hex. ACLError is set when
// the data was readable but the ACL not (or the other way round). Data
// may be a slice of the whole (Partial: asked for with offset and max,
// data.go); Size and UTF8 tell of the whole.
type nodeJSON struct {
	Path      string       `json:"path"`
	Data      []byte       `json:"data"`
	Offset    int          `json:"offset"`
	Size      int          `json:"size"`
	Partial   bool         `json:"partial,omitempty"`
	UTF8      bool         `json:"utf8"`
	Stat      *zkjson.Stat `json:"stat"`
	ACL       []aclJSON    `json:"acl"`
	DataError string       `json:"dataError,omitempty"`
	ACLError  string       `json:"aclError,omitempty"`
}

// handleNode answers a node's data (all of it, or the slice that offset
// and max ask for), Stat and ACL. getACL needs no permission in
// ZooKeeper, so a node whose data is refused still shows its Stat and
// ACL, with the refusal (and no data: the page offers no editor then).
func (c *Console) handleNode(w http.ResponseWriter, r *http.Request) {
	l, p := current(r), queryPath(r)
	out := nodeJSON{Path: p}
	acl, st, aclErr := l.zk.GetACL(p)
	if aclErr != nil {
		if !errorsIsAuth(aclErr) {
			failZK(w, aclErr)
			return
		}
		out.ACLError = aclErr.Error()
	} else {
		out.ACL, out.Stat = toACL(acl), zkjson.StatOf(st)
	}
	data, st, err := l.zk.Get(p)
	switch {
	case err == nil:
		sliceData(&out, r, data)
		out.Stat = zkjson.StatOf(st)
	case errorsIsAuth(err) && aclErr == nil:
		out.DataError = err.Error()
	default:
		failZK(w, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// errorsIsAuth reports a refusal by ACL.
func errorsIsAuth(err error) bool { return err == zk.ErrNoAuth }

// searchJSON answers a search by path prefix.
type searchJSON struct {
	Prefix    string   `json:"prefix"`
	Paths     []string `json:"paths"`
	Truncated bool     `json:"truncated"`
}

// handleSearch finds paths that start with a prefix: the children of the
// prefix's directory whose names start with its last component, and
// everything below them, breadth first, up to maxSearchHits. Directories
// the login may not list are passed over. It queues no more paths than
// it may still show, and once none fits it asks of each further node
// only whether it has children (for Truncated), without listing it: a
// directory's listing costs as many names as it holds, however few of
// them would be shown.
func (c *Console) handleSearch(w http.ResponseWriter, r *http.Request) {
	l := current(r)
	prefix := r.URL.Query().Get("prefix")
	if !strings.HasPrefix(prefix, "/") {
		fail(w, http.StatusBadRequest, "a prefix starts with /")
		return
	}
	dir, base := path.Split(prefix)
	if dir != "/" {
		dir = strings.TrimSuffix(dir, "/")
	}
	out := searchJSON{Prefix: prefix, Paths: []string{}}
	t := &turn{c: c}
	defer t.end()
	if err := t.forListing(r.Context(), l.zk, dir); err != nil {
		failBusy(w, err)
		return
	}
	names, _, err := l.zk.Children(dir)
	if err != nil {
		failZK(w, err)
		return
	}
	sortNames(names)
	var queue []string
	for _, n := range names {
		if strings.HasPrefix(n, base) {
			if len(queue) == maxSearchHits {
				out.Truncated = true
				break
			}
			queue = append(queue, childPath(dir, n))
		}
	}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		out.Paths = append(out.Paths, p)
		room := maxSearchHits - len(out.Paths) - len(queue)
		if room <= 0 {
			if !out.Truncated {
				ok, st, err := l.zk.Exists(p)
				out.Truncated = err == nil && ok && st.NumChildren > 0
			}
			continue
		}
		if err := t.forListing(r.Context(), l.zk, p); err != nil {
			failBusy(w, err)
			return
		}
		kids, _, err := l.zk.Children(p)
		if err != nil {
			continue
		}
		sortNames(kids)
		if len(kids) > room {
			kids, out.Truncated = kids[:room], true
		}
		for _, k := range kids {
			queue = append(queue, childPath(p, k))
		}
	}
	t.end()
	writeJSON(w, http.StatusOK, out)
}

// subtreeJSON lists what a recursive delete of Path would remove, deepest
// first (the order the deletes go in).
type subtreeJSON struct {
	Path      string   `json:"path"`
	Paths     []string `json:"paths"`
	Truncated bool     `json:"truncated"`
}

// handleSubtree lists a node and everything below it, children before
// parents, for the delete confirmation.
func (c *Console) handleSubtree(w http.ResponseWriter, r *http.Request) {
	t := &turn{c: c}
	defer t.end()
	paths, truncated, err := subtree(r.Context(), current(r).zk, queryPath(r), t)
	if err != nil {
		failTurnOrZK(w, err)
		return
	}
	t.end()
	writeJSON(w, http.StatusOK, subtreeJSON{Path: queryPath(r), Paths: paths, Truncated: truncated})
}

// subtree walks root depth first and returns its paths in post order
// (children first), at most maxSubtree of them; t takes a turn before a
// large directory is listed.
func subtree(ctx context.Context, conn *zkc, root string, t *turn) (paths []string, truncated bool, err error) {
	var walk func(p string) error
	walk = func(p string) error {
		if err := t.forListing(ctx, conn, p); err != nil {
			return err
		}
		kids, _, err := conn.Children(p)
		if err != nil {
			return err
		}
		sortNames(kids)
		for _, k := range kids {
			if len(paths) >= maxSubtree {
				truncated = true
				return nil
			}
			if err := walk(childPath(p, k)); err != nil && err != zk.ErrNoNode {
				return err
			}
		}
		paths = append(paths, p)
		return nil
	}
	err = walk(root)
	return paths, truncated, err
}
