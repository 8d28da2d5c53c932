package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// populateDirSize is how many leaves populate puts under one directory.
const populateDirSize = 1000

// populateWorkload builds a large tree: --nodes znodes of --value-size bytes
// in directories of 1000 under <root>/tree, the creates spread over the
// sessions and pipelined. It ends when every znode is created (no warm-up,
// --duration unused) and then checks the count with getAllChildrenNumber.
type populateWorkload struct {
	dir   string
	dirs  []string
	conns []*conn
	ok    atomic.Int64 // creates answered OK
}

func (w *populateWorkload) finite() bool { return true }

func (w *populateWorkload) setup(ctx context.Context, r *run) (int, error) {
	w.dir = r.cfg.Root + "/tree"
	if err := ensurePath(ctx, r.admin, w.dir); err != nil {
		return 0, err
	}
	n := (r.cfg.Nodes + populateDirSize - 1) / populateDirSize
	w.dirs = make([]string, n)
	for i := range w.dirs {
		w.dirs[i] = fmt.Sprintf("%s/d%05d", w.dir, i)
	}
	conns, _, err := r.dialAll(ctx, r.cfg.Sessions, nil)
	if err != nil {
		return 0, err
	}
	w.conns = conns
	if err := createAll(ctx, conns, w.dirs, nil); err != nil {
		return 0, err
	}
	return len(conns), nil
}

// handleReply counts successful creates.
func (w *populateWorkload) handleReply(_ *pendingOp, err jute.ErrCode, _ []byte) {
	if err == jute.OK {
		w.ok.Add(1)
	}
}

func (w *populateWorkload) work(ctx context.Context, r *run, i int) error {
	c := w.conns[i]
	for j := i; j < r.cfg.Nodes && !r.stopping() && ctx.Err() == nil; j += len(w.conns) {
		path := fmt.Sprintf("%s/n%07d", w.dirs[j/populateDirSize], j)
		if err := c.Create(path, r.value, jute.FlagPersistent, classCreate, w, 0); err != nil {
			return fmt.Errorf("session %d: %w", i, err)
		}
	}
	if err := c.Barrier(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("session %d: %w", i, err)
	}
	return nil
}

// counter is a reply handler that decodes an IntResponse.
type counter struct {
	ch chan int64
}

func (c counter) handleReply(_ *pendingOp, err jute.ErrCode, body []byte) {
	if err != jute.OK {
		c.ch <- int64(err)
		return
	}
	var resp jute.IntResponse
	if resp.Decode(jute.NewReader(body)) != nil {
		c.ch <- int64(jute.ErrMarshallingError)
		return
	}
	c.ch <- int64(resp.N)
}

func (w *populateWorkload) teardown(ctx context.Context, r *run, res *Result) error {
	closeAll(w.conns, 2*time.Second)
	cnt := counter{ch: make(chan int64, 1)}
	if err := r.admin.GetAllChildrenNumber(w.dir, classNone, cnt, 0); err != nil {
		return err
	}
	var got int64
	select {
	case got = <-cnt.ch:
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(30 * time.Second):
		return fmt.Errorf("getAllChildrenNumber: no reply: %w", jute.ErrOperationTimeout)
	}
	if got < 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("getAllChildrenNumber(%s) failed: %v", w.dir, jute.ErrCode(got)))
		return nil
	}
	want := int64(len(w.dirs)) + w.ok.Load()
	res.Notes = append(res.Notes, fmt.Sprintf("%s holds %d znodes (%d directories + %d leaves created)", w.dir, got, len(w.dirs), w.ok.Load()))
	if got != want {
		res.Problems = append(res.Problems, fmt.Sprintf("getAllChildrenNumber(%s) = %d, want %d", w.dir, got, want))
	}
	return nil
}
