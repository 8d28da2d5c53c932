// Package zkload drives setData through go-zookeeper/zk, the client Go
// applications use, at the low concurrency of clients that wait for each
// reply: Conns connections with PerConn goroutines each, every goroutine
// one request in flight. scripts/benchcompare reports it beside `zkraft
// bench`'s pipelined client (at 1 in flight over 1 connection, 4 over 4,
// 96 over 12), in a bench.Result whose latencies come from the bench's
// own histograms.
package zkload

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/bench"
)

// Config is one run.
type Config struct {
	Servers   []string // connection i goes to Servers[i % len]
	Conns     int      // connections (sessions)
	PerConn   int      // goroutines per connection, each with one request in flight
	Warmup    time.Duration
	Duration  time.Duration
	Root      string // znode the run creates and removes
	ValueSize int
}

// Op is the row name of the run's requests.
const Op = "setData"

// quiet keeps go-zookeeper's connection log out of the output.
type quiet struct{}

func (quiet) Printf(string, ...interface{}) {}

// Run connects cfg.Conns sessions, sets one znode per goroutine (its
// own, so no two requests wait on each other's version) for the warm-up
// and the measurement, and returns the measured requests: those sent in
// the measurement window. The run's znodes are removed after. Its client
// CPU is this whole process's during the measurement.
func Run(ctx context.Context, cfg Config) (*bench.Result, error) {
	if len(cfg.Servers) == 0 || cfg.Conns < 1 || cfg.PerConn < 1 || cfg.Duration <= 0 {
		return nil, fmt.Errorf("zkload: bad config %+v", cfg)
	}
	conns := make([]*zk.Conn, cfg.Conns)
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	for i := range conns {
		c, _, err := zk.Connect([]string{cfg.Servers[i%len(cfg.Servers)]}, 20*time.Second, zk.WithLogger(quiet{}))
		if err != nil {
			return nil, fmt.Errorf("zkload: %w", err)
		}
		conns[i] = c
	}
	value := make([]byte, cfg.ValueSize)
	for i := range value {
		value[i] = 'a' + byte(i%26)
	}
	admin := conns[0]
	if _, err := admin.Create(cfg.Root, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return nil, fmt.Errorf("zkload: create %s: %w", cfg.Root, err)
	}
	keys := make([]string, cfg.Conns*cfg.PerConn)
	for i := range keys {
		keys[i] = fmt.Sprintf("%s/k%d", cfg.Root, i)
		if _, err := admin.Create(keys[i], value, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return nil, fmt.Errorf("zkload: create %s: %w", keys[i], err)
		}
	}
	defer func() { // best effort: a failed run still tries to leave nothing
		for _, k := range keys {
			_ = admin.Delete(k, -1)
		}
		_ = admin.Delete(cfg.Root, -1)
	}()

	l := &load{epoch: time.Now(), errs: map[string]int64{}}
	l.start.Store(1 << 62)
	l.end.Store(1 << 62)
	var wg sync.WaitGroup
	for i, k := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.loop(conns[i/cfg.PerConn], k, value)
		}()
	}
	res, err := l.measure(ctx, cfg)
	l.stop.Store(true)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	res.Servers, res.Sessions, res.Inflight, res.ValueSize = cfg.Servers, cfg.Conns, cfg.PerConn, cfg.ValueSize
	l.mu.Lock()
	for k, n := range l.errs {
		res.Errors[k] += n
	}
	l.mu.Unlock()
	var s bench.HistSnapshot
	l.hist.Snapshot(&s)
	row := bench.Summarize(Op, &s, time.Duration(res.Seconds*float64(time.Second)))
	row.PerSecond = l.seconds
	if len(res.Errors) > 0 {
		row.Errors = res.Errors
	}
	res.Ops = []bench.OpStats{row}
	return res, nil
}

// load is a run's shared state.
type load struct {
	epoch      time.Time
	start, end atomic.Int64 // the measurement window, nanoseconds since epoch
	stop       atomic.Bool
	hist       bench.Histogram
	recorded   atomic.Int64          // requests recorded in hist
	seconds    []bench.LatencySecond // written by measure

	mu   sync.Mutex
	errs map[string]int64 // measured requests that failed, by error
}

func (l *load) now() int64 { return int64(time.Since(l.epoch)) }

// loop sets key until the run stops, recording what was sent in the window.
func (l *load) loop(c *zk.Conn, key string, value []byte) {
	for !l.stop.Load() {
		sent := l.now()
		_, err := c.Set(key, value, -1)
		took := l.now() - sent
		if sent < l.start.Load() || sent >= l.end.Load() {
			continue
		}
		if err != nil {
			l.mu.Lock()
			l.errs[err.Error()]++
			l.mu.Unlock()
			continue
		}
		l.hist.Record(took)
		l.recorded.Add(1)
	}
}

// measure waits out the warm-up, opens the window for cfg.Duration (or
// longer, until a request has completed in it) and takes the median and
// p99 of each whole second in it.
func (l *load) measure(ctx context.Context, cfg Config) (*bench.Result, error) {
	wait := func(d time.Duration) error {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("zkload: %w", ctx.Err())
		}
	}
	if err := wait(cfg.Warmup); err != nil {
		return nil, err
	}
	start, cpu := l.now(), bench.ProcessCPU()
	l.start.Store(start)
	prev := &bench.HistSnapshot{}
	for i := 1; time.Duration(i)*time.Second <= cfg.Duration; i++ {
		if err := wait(time.Duration(start + int64(i)*int64(time.Second) - l.now())); err != nil {
			return nil, err
		}
		s := &bench.HistSnapshot{}
		l.hist.Snapshot(s)
		l.seconds = append(l.seconds, s.Sub(prev).Second())
		prev = s
	}
	if err := wait(time.Duration(start + int64(cfg.Duration) - l.now())); err != nil {
		return nil, err
	}
	// A window in which no request completed (a server stalled for
	// longer than it, as a starved JVM can) measures nothing: it is
	// extended until one does, up to ten times its length, and the
	// result's Seconds is the window as it was.
	for limit := start + 10*int64(cfg.Duration); l.recorded.Load() == 0 && l.now() < limit; {
		if err := wait(50 * time.Millisecond); err != nil {
			return nil, err
		}
	}
	end := l.now()
	l.end.Store(end)
	return &bench.Result{Workload: "write", Warmup: cfg.Warmup.Seconds(), Seconds: time.Duration(end - start).Seconds(),
		ClientCPUSeconds: (bench.ProcessCPU() - cpu).Seconds(), Errors: map[string]int64{}}, nil
}
