package bench

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// churnWorkload is ephemeral churn: each worker repeatedly opens a session
// (new TCP connection + handshake), creates --ephemerals ephemeral znodes
// (pipelined), and closes the session. It reports connect, create,
// closeSession and whole-cycle latencies; afterwards it checks that the
// server removed every ephemeral.
type churnWorkload struct {
	dir  string
	recs []*recorder
}

func (w *churnWorkload) finite() bool { return false }

func (w *churnWorkload) setup(ctx context.Context, r *run) (int, error) {
	w.dir = r.cfg.Root + "/eph"
	if err := ensurePath(ctx, r.admin, w.dir); err != nil {
		return 0, err
	}
	w.recs = make([]*recorder, r.cfg.Sessions)
	for i := range w.recs {
		w.recs[i] = r.newRecorder()
	}
	return r.cfg.Sessions, nil
}

func (w *churnWorkload) work(ctx context.Context, r *run, i int) error {
	rec := w.recs[i]
	prefix := w.dir + "/w" + strconv.Itoa(i) + "-"
	for cycle := 0; !r.stopping(); cycle++ {
		if err := w.cycle(ctx, r, i, rec, prefix+strconv.Itoa(cycle)+"-"); err != nil {
			return fmt.Errorf("worker %d: %w", i, err)
		}
	}
	return nil
}

// cycle is one session's life.
func (w *churnWorkload) cycle(ctx context.Context, r *run, i int, rec *recorder, prefix string) error {
	t0 := nowNanos()
	c, err := r.dial(ctx, i, rec, nil)
	if err != nil {
		rec.failIn(classConnect, t0, jute.OK, "connect")
		if ctx.Err() != nil || r.stopping() {
			return nil
		}
		time.Sleep(100 * time.Millisecond) // a refused connection must not spin
		return nil
	}
	rec.sample(classConnect, t0, nowNanos())
	for e := 0; e < r.cfg.Ephemerals; e++ {
		if err := c.Create(prefix+strconv.Itoa(e), r.value, jute.FlagEphemeral, classCreate, nil, 0); err != nil {
			return err
		}
	}
	if err := c.Close(r.cfg.SessionTimeout, classClose); err != nil {
		rec.failIn(classCycle, t0, jute.OK, "close")
		return nil
	}
	rec.sample(classCycle, t0, nowNanos())
	return nil
}

func (w *churnWorkload) teardown(ctx context.Context, r *run, res *Result) error {
	levels, err := listTree(ctx, r.admin, w.dir)
	if err != nil {
		return err
	}
	if len(levels) > 1 && len(levels[1]) > 0 {
		res.Problems = append(res.Problems, fmt.Sprintf(
			"%d ephemeral znodes still exist after their sessions were closed (e.g. %s)", len(levels[1]), levels[1][0]))
	}
	return nil
}
