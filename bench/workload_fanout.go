package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// fanoutWorkload is watch fan-out: --watchers sessions each hold a data
// watch (getData with watch) on one znode; a writer session changes it and
// the round lasts until every watcher got NodeDataChanged. It reports the
// round time (setData sent → last event), per-event delivery latency, and
// the re-arm latency; a round counts as one op. Rounds run back to back.
type fanoutWorkload struct {
	target   string
	watchers []*conn
	recs     []*recorder
	writer   *conn
	wrec     *recorder

	round     atomic.Int64  // nowNanos when the current round's setData was queued; 0 between rounds
	delivered atomic.Int64  // events of the current round
	unexpect  atomic.Int64  // events that were not our NodeDataChanged
	roundNo   atomic.Int64  // current round, from 1
	dups      atomic.Int64  // a second event for one watcher in one round
	allIn     chan struct{} // cap 1: the current round is complete
}

func (w *fanoutWorkload) finite() bool { return false }

// fanoutWatcher routes one watcher session's notifications.
type fanoutWatcher struct {
	w    *fanoutWorkload
	rec  **recorder
	seen *atomic.Int64 // the last round this watcher was notified in
}

func (f fanoutWatcher) handleEvent(_ *conn, ev *jute.WatcherEvent, at int64) {
	w := f.w
	t0 := w.round.Load()
	if ev.Type != jute.EventNodeDataChanged || ev.Path != w.target || t0 == 0 {
		w.unexpect.Add(1)
		return
	}
	if n := w.roundNo.Load(); f.seen.Swap(n) == n {
		w.dups.Add(1)
		return
	}
	(*f.rec).sample(classEvent, t0, at)
	if w.delivered.Add(1) == int64(len(w.watchers)) {
		(*f.rec).sample(classFanout, t0, at)
		select {
		case w.allIn <- struct{}{}:
		default:
		}
	}
}

func (w *fanoutWorkload) setup(ctx context.Context, r *run) (int, error) {
	w.target = r.cfg.Root + "/fanout"
	w.allIn = make(chan struct{}, 1)
	if err := ensurePath(ctx, r.admin, w.target); err != nil {
		return 0, err
	}
	n := r.cfg.Watchers
	recPtrs := make([]*recorder, n)
	seen := make([]atomic.Int64, n)
	conns, recs, err := r.dialAll(ctx, n, func(i int) eventHandler {
		return fanoutWatcher{w: w, rec: &recPtrs[i], seen: &seen[i]}
	})
	if err != nil {
		return 0, err
	}
	copy(recPtrs, recs)
	w.watchers, w.recs = conns, recs
	w.wrec = r.newRecorder()
	w.writer, err = r.dial(ctx, n, w.wrec, nil)
	if err != nil {
		closeAll(conns, time.Second)
		return 0, err
	}
	return 1, nil
}

func (w *fanoutWorkload) work(ctx context.Context, r *run, _ int) error {
	limit := r.cfg.SessionTimeout
	for !r.stopping() {
		arm := newCountdown(len(w.watchers))
		for _, c := range w.watchers {
			if err := c.GetData(w.target, true, classArm, arm, 0); err != nil {
				return fmt.Errorf("arm watch: %w", err)
			}
		}
		if arm.wait(ctx) != nil {
			return nil // interrupted: the runner reports it
		}
		if err := arm.bad.check("arm watch"); err != nil {
			return err
		}
		w.delivered.Store(0)
		w.roundNo.Add(1)
		t0 := nowNanos()
		w.round.Store(t0)
		if err := w.writer.SetData(w.target, r.value, -1, classSet, nil, 0); err != nil {
			return fmt.Errorf("writer: %w", err)
		}
		t := time.NewTimer(limit)
		select {
		case <-w.allIn:
			t.Stop()
		case <-t.C:
			missing := int64(len(w.watchers)) - w.delivered.Load()
			w.wrec.failIn(classFanout, t0, jute.OK, "timeout")
			return fmt.Errorf("watch fan-out: %d of %d events not delivered within %v", missing, len(w.watchers), limit)
		case <-ctx.Done(): // interrupted: the runner reports it
			t.Stop()
			return nil
		}
		w.round.Store(0)
	}
	return w.writer.Barrier(context.WithoutCancel(ctx))
}

func (w *fanoutWorkload) teardown(_ context.Context, _ *run, res *Result) error {
	closeAll(append(w.watchers, w.writer), 2*time.Second)
	if n := w.unexpect.Load(); n > 0 {
		res.Problems = append(res.Problems, fmt.Sprintf("%d unexpected watch notifications", n))
	}
	if n := w.dups.Load(); n > 0 {
		res.Problems = append(res.Problems, fmt.Sprintf("%d duplicate notifications (one data watch fired twice)", n))
	}
	return nil
}
