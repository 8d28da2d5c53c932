package console

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/zkraft/zkraft/internal/base/turns"
)

// Large answers take turns. These requests' work grows with the tree, and
// any login may make them, several at once (the AdminServer takes 64
// connections from one address): an export holds its subtree (up to
// maxExportNodes nodes and maxExportBytes of data, then their JSON); a
// survey walks a subtree of up to maxJobNodes nodes, a request each; a
// listing holds every name of its directory (ZooKeeper has no paging;
// the console pages what it got), and a search or a deletion's listing
// may list large directories on the way. 16 exports of 15 MB at once
// took the heap from 38 to 718 MiB. A console makes at most maxTurns of
// them at once: exports and surveys always take a turn, the others only
// before they list a directory of more than largeListing children (the
// small ones, every page's, never wait). A write whose body is larger
// than largeBody takes one too, while it is read and handled: decoding a
// body (an import's is up to maxImportBody, a set's up to maxBody) holds
// about three times its size, so 16 sets of 8 MiB at once took 343 MiB.
// A request waits up to turnWait for its turn, then is refused (503,
// Retry-After 1). A turn ends once the answer is made, and a small
// answer is written after it; an export,
// whose answer is as large as its subtree, keeps its turn until it is
// written (one write, which the AdminServer's write deadline bounds), so
// that clients slow to read cannot each hold one.
const (
	maxTurns     = 2
	largeListing = 10 * maxPage
	largeBody    = 256 << 10
)

// turnWait is how long a large answer waits for its turn.
var turnWait = 10 * time.Second

// errBusy is a large answer refused after turnWait.
var errBusy = errors.New("the console is making other large answers; try again")

// turn is one request's hold on a turn: it takes at most one, and never
// waits while it holds it.
type turn struct {
	c    *Console
	held bool
}

// take waits for a turn, up to turnWait or until ctx ends, unless t
// holds one already.
func (t *turn) take(ctx context.Context) error {
	if t.held {
		return nil
	}
	if err := t.c.turns.Take(ctx, turnWait); err != nil {
		if errors.Is(err, turns.ErrBusy) {
			return errBusy
		}
		return err
	}
	t.held = true
	return nil
}

// forListing takes a turn before p is listed if p has more than
// largeListing children (an exists first: a listing's cost is known
// only once it is made). A node the login may not see is listed (and
// refused) without one.
func (t *turn) forListing(ctx context.Context, conn *zkc, p string) error {
	if t.held {
		return nil
	}
	if ok, st, err := conn.Exists(p); err != nil || !ok || st.NumChildren <= largeListing {
		return nil
	}
	return t.take(ctx)
}

// end gives the turn back, if t holds one.
func (t *turn) end() {
	if t.held {
		t.held = false
		t.c.turns.Done()
	}
}

// failBusy answers a request that got no turn.
func failBusy(w http.ResponseWriter, err error) {
	w.Header().Set("Retry-After", "1")
	fail(w, http.StatusServiceUnavailable, err.Error())
}

// failTurnOrZK answers the error of a walk that takes turns: busy (or
// the request's end) while it waited for one, else ZooKeeper's.
func failTurnOrZK(w http.ResponseWriter, err error) {
	if errors.Is(err, errBusy) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		failBusy(w, err)
		return
	}
	failZK(w, err)
}
