package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// churnWorkload is ephemeral churn: each worker repeatedly opens a session
// (new TCP connection + handshake), creates --ephemerals ephemeral znodes
// (pipelined, with the closeSession behind them), and closes the session,
// on its own goroutine (churnClient). It reports connect, create,
// closeSession and whole-cycle latencies; afterwards it checks that the
// server removed every ephemeral.
type churnWorkload struct {
	dir     string
	recs    []*recorder
	clients []*churnClient
}

func (w *churnWorkload) finite() bool { return false }

func (w *churnWorkload) setup(ctx context.Context, r *run) (int, error) {
	w.dir = r.cfg.Root + "/eph"
	if err := ensurePath(ctx, r.admin, w.dir); err != nil {
		return 0, err
	}
	w.recs = make([]*recorder, r.cfg.Sessions)
	w.clients = make([]*churnClient, r.cfg.Sessions)
	for i := range w.recs {
		w.recs[i] = r.newRecorder()
		w.clients[i] = newChurnClient(r.cfg.Servers[i%len(r.cfg.Servers)], r.cfg.SessionTimeout, r.cfg.ConnectTimeout)
	}
	return r.cfg.Sessions, nil
}

func (w *churnWorkload) work(ctx context.Context, r *run, i int) error {
	rec, cc := w.recs[i], w.clients[i]
	prefix := w.dir + "/w" + strconv.Itoa(i) + "-"
	var name []byte
	for cycle := 0; !r.stopping() && ctx.Err() == nil; cycle++ {
		name = strconv.AppendInt(append(name[:0], prefix...), int64(cycle), 10)
		name = append(name, '-')
		t0 := nowNanos()
		connected, err := cc.cycle(rec, string(name), r.cfg.Ephemerals, r.value)
		switch {
		case err == nil:
		case !connected:
			rec.failIn(classConnect, t0, jute.OK, "connect")
			if r.stopping() || ctx.Err() != nil {
				return nil
			}
			time.Sleep(100 * time.Millisecond) // a refused connection must not spin
		case errors.Is(err, ErrProtocol):
			return fmt.Errorf("worker %d: %w", i, err)
		default:
			rec.failIn(classCycle, t0, jute.OK, "incomplete") // its requests' own rows say why
		}
	}
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
