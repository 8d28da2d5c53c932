package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// kvWorkload is read (getData), write (setData) and mixed: every session
// picks uniformly random keys among --keys znodes of --value-size bytes and
// keeps --inflight requests outstanding. readRatio is the fraction of reads.
type kvWorkload struct {
	readRatio float64
	keys      []string
	conns     []*conn
}

func (w *kvWorkload) finite() bool { return false }

// keyPaths names n keys under root.
func keyPaths(root string, n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("%s/keys/k%07d", root, i)
	}
	return keys
}

func (w *kvWorkload) setup(ctx context.Context, r *run) (int, error) {
	w.keys = keyPaths(r.cfg.Root, r.cfg.Keys)
	if err := ensurePath(ctx, r.admin, r.cfg.Root+"/keys"); err != nil {
		return 0, err
	}
	conns, _, err := r.dialAll(ctx, r.cfg.Sessions, nil)
	if err != nil {
		return 0, err
	}
	w.conns = conns
	if err := createAll(ctx, conns, w.keys, r.value); err != nil {
		return 0, err
	}
	return len(conns), nil
}

func (w *kvWorkload) work(ctx context.Context, r *run, i int) error {
	c := w.conns[i]
	rng := rand.New(rand.NewPCG(uint64(r.cfg.Seed), uint64(i)))
	n := uint64(len(w.keys))
	for !r.stopping() {
		key := w.keys[rng.Uint64N(n)]
		var err error
		if w.readRatio >= 1 || (w.readRatio > 0 && rng.Float64() < w.readRatio) {
			err = c.GetData(key, false, classGet, nil, 0)
		} else {
			err = c.SetData(key, r.value, -1, classSet, nil, 0)
		}
		if err != nil {
			return fmt.Errorf("session %d: %w", i, err)
		}
	}
	if err := c.Barrier(context.WithoutCancel(ctx)); err != nil { // answers are bounded by the read timeout
		return fmt.Errorf("session %d: %w", i, err)
	}
	return nil
}

func (w *kvWorkload) teardown(_ context.Context, _ *run, _ *Result) error {
	closeAll(w.conns, 2*time.Second)
	return nil
}
