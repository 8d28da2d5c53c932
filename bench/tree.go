package bench

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/zkraft/zkraft/jute"
)

// tally is a reply handler for bulk setup/cleanup requests: it counts
// answers with an unexpected code and remembers the first one.
type tally struct {
	ok    jute.ErrCode // a second acceptable code besides OK (e.g. NodeExists)
	bad   atomic.Int64
	first atomic.Int32
}

func (t *tally) handleReply(_ *pendingOp, err jute.ErrCode, _ []byte) {
	if err == jute.OK || err == t.ok {
		return
	}
	if t.bad.Add(1) == 1 {
		t.first.Store(int32(err))
	}
}

// check returns an error describing the unexpected answers, if any.
func (t *tally) check(what string) error {
	if n := t.bad.Load(); n > 0 {
		return fmt.Errorf("%s: %d requests failed, first with %w", what, n, jute.ErrCode(t.first.Load()))
	}
	return nil
}

// ensurePath creates path and its missing ancestors as persistent znodes.
func ensurePath(ctx context.Context, c *conn, path string) error {
	t := &tally{ok: jute.ErrNodeExists}
	for i := 1; i <= len(path); i++ {
		if i == len(path) || path[i] == '/' {
			if err := c.Create(path[:i], nil, jute.FlagPersistent, classNone, t, 0); err != nil {
				return err
			}
		}
	}
	if err := c.Barrier(ctx); err != nil {
		return err
	}
	return t.check("create " + path)
}

// createAll creates every path (persistent, value data) pipelined over
// conns; already existing znodes are fine.
func createAll(ctx context.Context, conns []*conn, paths []string, data []byte) error {
	t := &tally{ok: jute.ErrNodeExists}
	var wg sync.WaitGroup
	errs := make([]error, len(conns))
	for ci, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := ci; i < len(paths); i += len(conns) {
				if err := c.Create(paths[i], data, jute.FlagPersistent, classNone, t, 0); err != nil {
					errs[ci] = err
					return
				}
			}
			errs[ci] = c.Barrier(ctx)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return t.check("create znodes")
}

// childLister collects getChildren answers: children of parents[arg].
type childLister struct {
	parents []string
	mu      sync.Mutex
	found   []string // guarded by mu: full paths
	bad     tally
}

func (l *childLister) handleReply(p *pendingOp, err jute.ErrCode, body []byte) {
	if err != jute.OK {
		l.bad.handleReply(p, err, nil)
		return
	}
	parent := l.parents[p.arg]
	r := jute.NewReader(body)
	names := r.Strings()
	if r.Err() != nil {
		l.bad.handleReply(p, jute.ErrMarshallingError, nil)
		return
	}
	l.mu.Lock()
	for _, n := range names {
		l.found = append(l.found, parent+"/"+n)
	}
	l.mu.Unlock()
}

// listTree returns root and all its descendants, level by level.
func listTree(ctx context.Context, c *conn, root string) ([][]string, error) {
	levels := [][]string{{root}}
	for depth := 0; depth < 1000; depth++ {
		l := &childLister{parents: levels[len(levels)-1]}
		l.bad.ok = jute.ErrNoNode // deleted meanwhile
		for i, p := range l.parents {
			if err := c.GetChildren(p, classNone, l, int64(i)); err != nil {
				return nil, err
			}
		}
		if err := c.Barrier(ctx); err != nil {
			return nil, err
		}
		if err := l.bad.check("getChildren"); err != nil {
			return nil, err
		}
		if len(l.found) == 0 {
			return levels, nil
		}
		sort.Strings(l.found)
		levels = append(levels, l.found)
	}
	return nil, fmt.Errorf("list %s: deeper than 1000 levels", root)
}

// deleteTree deletes root and everything below it, deepest level first,
// each level's deletes spread over conns and pipelined. It lists the tree on
// conns[0] and returns how many znodes were deleted.
func deleteTree(ctx context.Context, conns []*conn, root string) (int, error) {
	if root == "/" || !strings.HasPrefix(root, "/") {
		return 0, fmt.Errorf("refusing to delete %q", root)
	}
	levels, err := listTree(ctx, conns[0], root)
	if err != nil {
		return 0, err
	}
	n := 0
	for d := len(levels) - 1; d >= 0; d-- {
		t := &tally{ok: jute.ErrNoNode}
		errs := make([]error, len(conns))
		var wg sync.WaitGroup
		for ci, c := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := ci; i < len(levels[d]); i += len(conns) {
					if err := c.Delete(levels[d][i], -1, classNone, t, 0); err != nil {
						errs[ci] = err
						return
					}
				}
				errs[ci] = c.Barrier(ctx)
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return n, err
		}
		if err := t.check("delete"); err != nil {
			return n, err
		}
		n += len(levels[d])
	}
	return n, nil
}
