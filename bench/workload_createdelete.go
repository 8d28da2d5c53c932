package bench

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// createDeleteWorkload has every session create a fresh persistent znode of
// --value-size bytes and delete it again, both pipelined: create and delete
// latencies are reported separately.
type createDeleteWorkload struct {
	dir   string
	conns []*conn
}

func (w *createDeleteWorkload) finite() bool { return false }

func (w *createDeleteWorkload) setup(ctx context.Context, r *run) (int, error) {
	w.dir = r.cfg.Root + "/cd"
	if err := ensurePath(ctx, r.admin, w.dir); err != nil {
		return 0, err
	}
	conns, _, err := r.dialAll(ctx, r.cfg.Sessions, nil)
	if err != nil {
		return 0, err
	}
	w.conns = conns
	return len(conns), nil
}

func (w *createDeleteWorkload) work(ctx context.Context, r *run, i int) error {
	c := w.conns[i]
	prefix := []byte(w.dir + "/s" + strconv.Itoa(i) + "-")
	buf := make([]byte, 0, len(prefix)+20)
	for seq := int64(0); !r.stopping(); seq++ {
		buf = strconv.AppendInt(append(buf[:0], prefix...), seq, 10)
		path := string(buf)
		if err := c.Create(path, r.value, jute.FlagPersistent, classCreate, nil, 0); err != nil {
			return fmt.Errorf("session %d: %w", i, err)
		}
		if err := c.Delete(path, -1, classDelete, nil, 0); err != nil {
			return fmt.Errorf("session %d: %w", i, err)
		}
	}
	if err := c.Barrier(context.WithoutCancel(ctx)); err != nil { // answers are bounded by the read timeout
		return fmt.Errorf("session %d: %w", i, err)
	}
	return nil
}

func (w *createDeleteWorkload) teardown(_ context.Context, _ *run, _ *Result) error {
	closeAll(w.conns, 2*time.Second)
	return nil
}
