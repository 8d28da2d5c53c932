package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/zkraft/zkraft/bench/treeshape"
	"github.com/zkraft/zkraft/jute"
)

// populateDirSize is how many leaves populate puts under one directory.
const populateDirSize = 1000

// populateWorkload builds a large tree: --nodes znodes of --value-size bytes
// under <root>/tree, in directories of 1000 (--shape flat) or laid out by
// bench/treeshape (--shape realistic: exactly --nodes znodes, directories
// included, which hold --value-size bytes too), the creates spread over
// the sessions and pipelined. It ends when every znode is created (no
// warm-up, --duration unused) and then checks the count with
// getAllChildrenNumber.
type populateWorkload struct {
	dir    string
	ndirs  int
	leaves int
	leaf   func(i int) string // leaf i's path
	conns  []*conn
	ok     atomic.Int64 // creates answered OK
}

func (w *populateWorkload) finite() bool { return true }

func (w *populateWorkload) setup(ctx context.Context, r *run) (int, error) {
	w.dir = r.cfg.Root + "/tree"
	if err := ensurePath(ctx, r.admin, w.dir); err != nil {
		return 0, err
	}
	levels := w.layout(r.cfg)
	var data []byte // the flat layout's directories are empty
	if r.cfg.Shape == "realistic" {
		data = r.value
	}
	conns, _, err := r.dialAll(ctx, r.cfg.Sessions, nil)
	if err != nil {
		return 0, err
	}
	w.conns = conns
	for _, dirs := range levels { // a level's parents exist before it is created
		w.ndirs += len(dirs)
		if err := createAll(ctx, conns, dirs, data); err != nil {
			return 0, err
		}
	}
	return len(conns), nil
}

// layout sets the leaves and returns the directories, by depth.
func (w *populateWorkload) layout(cfg *Config) [][]string {
	if cfg.Shape == "realistic" {
		s, err := treeshape.New(w.dir, cfg.Nodes, 1)
		if err == nil {
			w.leaves, w.leaf = s.Leaves(), s.Leaf
			return s.Levels()
		}
		// Too few for the shape: the flat layout.
	}
	dirs := make([]string, (cfg.Nodes+populateDirSize-1)/populateDirSize)
	for i := range dirs {
		dirs[i] = fmt.Sprintf("%s/d%05d", w.dir, i)
	}
	w.leaves = cfg.Nodes
	w.leaf = func(i int) string { return fmt.Sprintf("%s/n%07d", dirs[i/populateDirSize], i) }
	return [][]string{dirs}
}

// handleReply counts successful creates.
func (w *populateWorkload) handleReply(_ *pendingOp, err jute.ErrCode, _ []byte) {
	if err == jute.OK {
		w.ok.Add(1)
	}
}

func (w *populateWorkload) work(ctx context.Context, r *run, i int) error {
	c := w.conns[i]
	for j := i; j < w.leaves && !r.stopping() && ctx.Err() == nil; j += len(w.conns) {
		if err := c.Create(w.leaf(j), r.value, jute.FlagPersistent, classCreate, w, 0); err != nil {
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
	want := int64(w.ndirs) + w.ok.Load()
	res.Notes = append(res.Notes, fmt.Sprintf("%s holds %d znodes (%d directories + %d leaves created)", w.dir, got, w.ndirs, w.ok.Load()))
	if got != want {
		res.Problems = append(res.Problems, fmt.Sprintf("getAllChildrenNumber(%s) = %d, want %d", w.dir, got, want))
	}
	return nil
}
