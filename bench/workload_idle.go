package bench

import (
	"context"
	"time"
)

// idleWorkload holds --sessions connected sessions that send nothing but
// pings for --duration: what a member pays per connected client (memory,
// idle CPU) is measured from outside while it runs. The table has no rows;
// the setup line reports how long connecting all of them took.
type idleWorkload struct {
	conns []*conn
}

func (w *idleWorkload) finite() bool { return false }

func (w *idleWorkload) setup(ctx context.Context, r *run) (int, error) {
	conns, _, err := r.dialAll(ctx, r.cfg.Sessions, nil)
	if err != nil {
		return 0, err
	}
	w.conns = conns
	return 1, nil
}

// work waits for the end; the sessions' own writers keep them alive.
func (w *idleWorkload) work(ctx context.Context, r *run, _ int) error {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for !r.stopping() {
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil
		}
	}
	return nil
}

func (w *idleWorkload) teardown(_ context.Context, _ *run, _ *Result) error {
	closeAll(w.conns, 2*time.Second)
	return nil
}
