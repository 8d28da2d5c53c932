package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// workload is one benchmark scenario. The runner calls setup once (not
// measured), then work once per worker concurrently until stopping reports
// true (or until work returns by itself, for finite workloads), then
// teardown once.
type workload interface {
	// setup connects whatever sessions the workload needs and creates its
	// znodes; it returns the number of workers to start.
	setup(ctx context.Context, r *run) (workers int, err error)
	// work drives worker i. It must return promptly once r.stopping()
	// and must wait for its own requests to be answered before returning.
	work(ctx context.Context, r *run, i int) error
	// teardown closes sessions, checks what the server left behind and may
	// add notes to the result.
	teardown(ctx context.Context, r *run, res *Result) error
	// finite reports whether work ends by itself (populate): then the
	// measurement lasts until every worker returns, and there is no warm-up.
	finite() bool
}

// cleanupSessions bounds the sessions that delete the benchmark's subtree.
const cleanupSessions = 8

// run is the state shared by the runner and the workload.
type run struct {
	cfg   *Config
	win   *window
	value []byte // the value written by every create/setData
	admin *conn  // setup and cleanup session
	log   io.Writer

	recMu sync.Mutex
	recs  []*recorder // guarded by recMu

	stop atomic.Bool

	open sync.Map // *conn → struct{}: every live session, for abortAll
}

// stopping reports whether workers should stop issuing requests.
func (r *run) stopping() bool { return r.stop.Load() }

// newRecorder returns a recorder that will be part of the results.
func (r *run) newRecorder() *recorder {
	rec := newRecorder(r.win)
	r.recMu.Lock()
	r.recs = append(r.recs, rec)
	r.recMu.Unlock()
	return rec
}

// recorders returns the current recorders.
func (r *run) recorders() []*recorder {
	r.recMu.Lock()
	defer r.recMu.Unlock()
	return append([]*recorder(nil), r.recs...)
}

// Run executes one benchmark and returns its results. Progress lines go to
// progress (nil: none); notes about phases go to logw (nil: none).
func Run(ctx context.Context, cfg Config, progress *Progress, logw io.Writer) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if logw == nil {
		logw = io.Discard
	}
	w, err := newWorkload(&cfg)
	if err != nil {
		return nil, err
	}
	r := &run{cfg: &cfg, win: newWindow(), log: logw, value: makeValue(cfg.ValueSize)}
	admin, err := r.dial(ctx, 0, nil, nil)
	if err != nil {
		return nil, err
	}
	r.admin = admin
	defer admin.Close(2*time.Second, classNone)
	if err := ensurePath(ctx, admin, cfg.Root); err != nil {
		return nil, fmt.Errorf("create %s: %w", cfg.Root, err)
	}
	cleanup := func() {
		if cfg.Keep {
			return
		}
		ctx := context.WithoutCancel(ctx)
		t0 := time.Now()
		conns := []*conn{admin}
		if extra, _, err := r.dialAll(ctx, min(cfg.Sessions, cleanupSessions)-1, nil); err == nil {
			conns = append(conns, extra...)
			defer closeAll(extra, 2*time.Second)
		}
		n, err := deleteTree(ctx, conns, cfg.Root)
		if err != nil {
			fmt.Fprintf(logw, "cleanup of %s failed after %d deletions: %v\n", cfg.Root, n, err)
			return
		}
		fmt.Fprintf(logw, "cleanup: deleted %d znodes under %s in %v\n", n, cfg.Root, time.Since(t0).Round(time.Millisecond))
	}
	t0 := time.Now()
	workers, err := w.setup(ctx, r)
	if err != nil {
		_ = w.teardown(context.WithoutCancel(ctx), r, &Result{}) // close whatever sessions setup opened
		cleanup()
		return nil, fmt.Errorf("setup: %w", err)
	}
	fmt.Fprintf(logw, "setup: %d workers ready in %v\n", workers, time.Since(t0).Round(time.Millisecond))

	res, runErr := r.measure(ctx, w, workers, progress)
	if err := w.teardown(context.WithoutCancel(ctx), r, res); err != nil {
		runErr = errors.Join(runErr, fmt.Errorf("teardown: %w", err))
	}
	cleanup()
	return res, runErr
}

// measure runs the workers through warm-up and measurement.
func (r *run) measure(ctx context.Context, w workload, workers int, progress *Progress) (*Result, error) {
	cfg := r.cfg
	errs := make([]error, workers)
	var wg sync.WaitGroup
	finished := make(chan struct{})
	var cpuAtStart time.Duration // the client's own CPU when the measurement began
	if w.finite() {
		r.win.start.Store(nowNanos())
		cpuAtStart = processCPU()
	}
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = w.work(ctx, r, i)
		}()
	}
	go func() { wg.Wait(); close(finished) }()
	if progress != nil {
		progress.start(r)
		defer progress.finish()
	}
	_, silent := w.(*idleWorkload)
	tl := startTimeline(r, silent)

	sleep := func(d time.Duration) bool { // false: finished early or cancelled
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-finished:
		case <-ctx.Done():
		}
		return false
	}
	if w.finite() {
		select {
		case <-finished:
		case <-ctx.Done():
		}
	} else if cfg.Warmup <= 0 || sleep(cfg.Warmup) {
		r.win.start.Store(nowNanos())
		cpuAtStart = processCPU()
		sleep(cfg.Duration)
	}
	end := nowNanos()
	clientCPU := processCPU() - cpuAtStart
	r.win.end.Store(end)
	r.stop.Store(true)
	var stuck error
	if !r.await(finished, cfg.SessionTimeout+5*time.Second) {
		stuck = fmt.Errorf("requests unanswered %v after the end: connections aborted", cfg.SessionTimeout+5*time.Second)
		r.abortAll()
		if !r.await(finished, 10*time.Second) {
			res := r.result(time.Duration(end - r.win.start.Load()))
			tl.finish(res)
			return res, fmt.Errorf("%w; workers still blocked", stuck)
		}
	}
	start := r.win.start.Load()
	if start > end { // cancelled during warm-up
		start = end
	}
	res := r.result(time.Duration(end - start))
	tl.finish(res)
	if cpuAtStart > 0 && start < end {
		res.ClientCPUSeconds = clientCPU.Seconds()
	}
	return res, errors.Join(append(errs, stuck)...)
}

// await waits for ch to close, at most d.
func (r *run) await(ch <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

// makeValue returns size bytes of printable data.
func makeValue(size int) []byte {
	v := make([]byte, size)
	for i := range v {
		v[i] = 'a' + byte(i%26)
	}
	return v
}

// codeName renders a ZooKeeper error code for tables and JSON.
func codeName(code jute.ErrCode) string {
	return fmt.Sprintf("%d %s", int32(code), strings.TrimPrefix(code.Error(), "zk: "))
}
