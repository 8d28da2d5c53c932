package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// OverloadConfig is more load than the ensemble can commit: the write
// capacity is measured first (Sessions sessions pipelining setData, a
// fixed number in flight), then Factor times it is offered for Duration
// by the same sessions at a fixed rate, each keeping at most Window
// requests in flight (a request due while its session's window is full
// is held back, not sent); Idle sessions that only ping and a bystander
// are held throughout.
type OverloadConfig struct {
	LoadOptions
	Sessions int           // load sessions (default 64)
	Window   int           // requests in flight per load session at most (default 256)
	Idle     int           // idle sessions held meanwhile (default 1000)
	Keys     int           // znodes written (default 1000)
	Capacity time.Duration // measuring the capacity, over its steps (default 12 s)
	Factor   float64       // the offered load, times the capacity (default 3)
	Duration time.Duration // the overload (default 60 s)
	// Recovery is the most to wait, once the load stops, for the
	// bystander's latency to be back to normal (default 60 s).
	Recovery time.Duration
	// Sample is called once a second from the overload's start to the
	// end of the recovery; it returns what the caller measures of each
	// member (resident memory in bytes). nil: nothing is sampled.
	Sample func() []int64
}

// capacityDepths are the setData requests in flight over all load
// sessions at each step of measuring the capacity, from the write
// workload of scripts/benchcompare (16 sessions x 32) up: a server that
// batches commits gets faster with more in flight, so its capacity is
// the best step.
var capacityDepths = []int{512, 2048, 8192}

// measureCapacity runs the load sessions closed loop, depth requests in
// flight each, for cfg.Capacity split over the steps (after a second
// of warm-up), and returns the setData answered per second, their p99
// and the requests that failed.
func measureCapacity(ctx context.Context, cfg *OverloadConfig, sessions []*loadSession, keys []string, value []byte, depth int) (float64, time.Duration, int64) {
	const warm = time.Second
	step := max(time.Second, cfg.Capacity/time.Duration(len(capacityDepths))).Round(time.Second)
	secs := int((warm + step) / time.Second)
	cm := newLoadMeter(len(sessions), secs+1)
	driveLoad(ctx, sessions, keys, value, cm, warm+step, func(i int, stop <-chan struct{}) int {
		for cm.out[i].Load() >= int64(depth) {
			select {
			case <-cm.wake[i]:
			case <-stop:
				return 0
			}
		}
		return 1
	})
	waitDrained(cm, cfg.SessionTimeout)
	n, h := cm.span(int(warm/time.Second), secs)
	return float64(n) / step.Seconds(), time.Duration(h.Quantile(0.99)), cm.errs.Load()
}

// OverloadResult is the overload's figures.
type OverloadResult struct {
	Capacity      float64       // setData answered per second, closed loop, at the best step
	CapacityP99   time.Duration // their p99 at that step
	CapacityDepth int           // the requests in flight at that step
	Offered       float64       // setData per second offered in the overload
	// Seconds are the overload's and then the recovery's seconds.
	Seconds []OverloadSecond
	// Over the overload: setData answered per second, their latency
	// (from the send) over the whole and each half, the requests held
	// back by full windows, and those answered with an error or lost.
	Throughput                            float64
	P50, P99, P99FirstHalf, P99SecondHalf time.Duration
	HeldBack, LoadErrors                  int64
	Baseline, Bystander                   Latency       // the bystander before and during the overload
	Drain                                 time.Duration // the load's end → its last reply
	Recovery                              time.Duration // the load's end → the bystander back to normal; -1: not within cfg.Recovery
	Normal                                time.Duration // the bystander's latency taken as normal
	Expired, Lost                         int           // sessions (load, idle, bystander) expired, or lost otherwise
	FirstError                            string
	LoadSeconds                           int // how many of Seconds are the overload's
	// ClientCPU is the CPU this process (the load's sessions) used
	// during the overload, in cores: on a machine shared with the
	// members, the client's own share of it.
	ClientCPU float64
}

// OverloadSecond is one second of the overload or the recovery.
type OverloadSecond struct {
	Sent, Done   int64
	P50, P99     time.Duration // of the setData answered in this second
	BystanderP99 time.Duration
	RSS          []int64 // cfg.Sample's
}

// loadMeter counts the load's setData by second (of wall time from
// start) and bounds each session's requests in flight.
type loadMeter struct {
	start int64 // wall ns of second 0
	secs  []meterSecond
	out   []atomic.Int64  // requests in flight, by session
	wake  []chan struct{} // cap 1: a reply freed a slot of the session
	errs  atomic.Int64
}

// meterSecond is one second's count.
type meterSecond struct {
	sent, done atomic.Int64
	hist       Histogram
}

func newLoadMeter(sessions int, seconds int) *loadMeter {
	m := &loadMeter{start: wallNanos(), secs: make([]meterSecond, seconds), out: make([]atomic.Int64, sessions), wake: make([]chan struct{}, sessions)}
	for i := range m.wake {
		m.wake[i] = make(chan struct{}, 1)
	}
	return m
}

// second returns the bucket of wall time t (nil beyond the last).
func (m *loadMeter) second(t int64) *meterSecond {
	i := (t - m.start) / int64(time.Second)
	if i < 0 || i >= int64(len(m.secs)) {
		return nil
	}
	return &m.secs[i]
}

// send counts a request of session i going out.
func (m *loadMeter) send(i int) {
	m.out[i].Add(1)
	if s := m.second(wallNanos()); s != nil {
		s.sent.Add(1)
	}
}

// handleReply counts a setData's answer (arg is its session).
func (m *loadMeter) handleReply(p *pendingOp, err jute.ErrCode, _ []byte) {
	m.out[p.arg].Add(-1)
	select {
	case m.wake[p.arg] <- struct{}{}:
	default:
	}
	if err != jute.OK {
		m.errs.Add(1)
		return
	}
	if s := m.second(wallNanos()); s != nil {
		s.done.Add(1)
		s.hist.Record(nowNanos() - p.start)
	}
}

// span merges seconds [from, to) of m.
func (m *loadMeter) span(from, to int) (done int64, h HistSnapshot) {
	for i := max(from, 0); i < min(to, len(m.secs)); i++ {
		done += m.secs[i].done.Load()
		m.secs[i].hist.Snapshot(&h)
	}
	return done, h
}

// outstanding is the requests in flight over all sessions.
func (m *loadMeter) outstanding() int64 {
	var n int64
	for i := range m.out {
		n += m.out[i].Load()
	}
	return n
}

// RunOverload runs the overload on cfg.Servers.
func RunOverload(ctx context.Context, cfg OverloadConfig) (*OverloadResult, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	setDefault(&cfg.Sessions, 64)
	setDefault(&cfg.Window, 256)
	setDefault(&cfg.Idle, 1000)
	setDefault(&cfg.Keys, 1000)
	setDefault(&cfg.Capacity, 12*time.Second)
	setDefault(&cfg.Factor, 3)
	setDefault(&cfg.Duration, 60*time.Second)
	setDefault(&cfg.Recovery, 60*time.Second)
	value := makeValue(100)
	keys := keyPaths(cfg.Root, cfg.Keys)
	admin, err := dialAny(ctx, &cfg.LoadOptions)
	if err != nil {
		return nil, err
	}
	err = ensurePath(ctx, admin, cfg.Root+"/keys")
	if err == nil {
		err = createAll(ctx, []*conn{admin}, keys, value)
	}
	_ = admin.Close(2*time.Second, classNone)
	if err != nil {
		return nil, err
	}
	idle, err := startFleet(&cfg.LoadOptions, cfg.Idle)
	if err != nil {
		return nil, err
	}
	defer idle.close()
	if _, err := idle.open(ctx, &cfg.LoadOptions, openSpec{resume: true}); err != nil {
		return nil, err
	}
	by, err := startBystander(ctx, &cfg.LoadOptions, cfg.Root+"/bystander", value)
	if err != nil {
		return nil, err
	}
	defer by.close()
	done := make(chan struct{})
	defer close(done)
	sessions := make([]*loadSession, cfg.Sessions)
	for i := range sessions {
		sessions[i] = newLoadSession(i, cfg.Servers, dialOptions{timeout: cfg.SessionTimeout, dialWait: cfg.SessionTimeout / 2,
			inflight: cfg.Window, local: sourceAddr(i, cfg.Sources)}, true, done, nil)
		if err := sessions[i].open(ctx, 3 /* attempts */); err != nil {
			return nil, err
		}
	}
	defer func() {
		for _, s := range sessions {
			s.close(2 * time.Second)
		}
	}()
	res := &OverloadResult{}

	// The quiet bystander, then the capacity, closed loop.
	quiet := wallNanos()
	if err := sleepCtx(ctx, 2*time.Second); err != nil {
		return nil, err
	}
	res.Baseline = by.window(quiet, wallNanos())
	var capErrs int64
	tried := map[int]bool{}
	for _, total := range capacityDepths {
		depth := max(1, min(total/cfg.Sessions, cfg.Window))
		if tried[depth] { // capped by the window
			continue
		}
		tried[depth] = true
		thr, p99, errs := measureCapacity(ctx, &cfg, sessions, keys, value, depth)
		capErrs += errs
		cfg.logf("overload: %d in flight: %.0f setData/s, p99 %v", depth*cfg.Sessions, thr, p99.Round(time.Microsecond))
		if thr > res.Capacity {
			res.Capacity, res.CapacityP99, res.CapacityDepth = thr, p99, depth*cfg.Sessions
		}
	}
	if res.Capacity <= 0 {
		return res, fmt.Errorf("bench: overload: no setData answered while measuring the capacity")
	}
	res.Offered = cfg.Factor * res.Capacity

	// The overload: Factor times the capacity at a fixed rate, each
	// session's share every 10 ms.
	if err := sleepCtx(ctx, 2*time.Second); err != nil {
		return nil, err
	}
	loadSecs := int((cfg.Duration + time.Second - 1) / time.Second)
	recSecs := int((cfg.Recovery + time.Second - 1) / time.Second)
	om := newLoadMeter(cfg.Sessions, loadSecs+recSecs+2)
	samples := sampleEverySecond(cfg.Sample, om.start, done)
	perSession := res.Offered / float64(cfg.Sessions)
	var held atomic.Int64
	cfg.logf("overload: offering %.0f setData/s (%.1fx the capacity of %.0f/s) for %v", res.Offered, cfg.Factor, res.Capacity, cfg.Duration)
	start, cpu0 := time.Now(), processCPU()
	issued := make([]float64, cfg.Sessions)
	driveLoad(ctx, sessions, keys, value, om, cfg.Duration, func(i int, stop <-chan struct{}) int {
		select {
		case <-time.After(10 * time.Millisecond):
		case <-stop:
			return 0
		}
		due := perSession*time.Since(start).Seconds() - issued[i]
		k := 0
		for ; due >= 1; due-- {
			issued[i]++
			if om.out[i].Load()+int64(k) >= int64(cfg.Window) {
				held.Add(1)
				continue
			}
			k++
		}
		return k
	})
	stopAt := wallNanos()
	res.ClientCPU = (processCPU() - cpu0).Seconds() / time.Since(start).Seconds()
	res.LoadSeconds = loadSecs
	res.HeldBack = held.Load()
	cfg.logf("overload: load stopped; waiting for its replies and the bystander's latency")
	res.Drain = waitDrained(om, cfg.Recovery)
	res.Normal = max(2*res.Baseline.P99, res.Baseline.P99+2*time.Millisecond)
	res.Recovery = -1
	for deadline := stopAt + int64(cfg.Recovery); wallNanos() < deadline; {
		if at, ok := by.recovered(stopAt, res.Normal, 20); ok {
			res.Recovery = time.Duration(at - stopAt)
			break
		}
		if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
			return nil, err
		}
	}
	res.Bystander = by.window(om.start, stopAt)

	// The figures.
	last := int((wallNanos() - om.start) / int64(time.Second))
	rss := samples()
	for i := 0; i < min(last, len(om.secs)); i++ {
		var h HistSnapshot
		om.secs[i].hist.Snapshot(&h)
		sec := OverloadSecond{Sent: om.secs[i].sent.Load(), Done: om.secs[i].done.Load(),
			P50: time.Duration(h.Quantile(0.5)), P99: time.Duration(h.Quantile(0.99)),
			BystanderP99: by.window(om.start+int64(i)*int64(time.Second), om.start+int64(i+1)*int64(time.Second)-1).P99}
		if i < len(rss) {
			sec.RSS = rss[i]
		}
		res.Seconds = append(res.Seconds, sec)
	}
	n, h := om.span(0, loadSecs)
	res.Throughput = float64(n) / float64(loadSecs)
	res.P50, res.P99 = time.Duration(h.Quantile(0.5)), time.Duration(h.Quantile(0.99))
	_, h = om.span(0, loadSecs/2)
	res.P99FirstHalf = time.Duration(h.Quantile(0.99))
	_, h = om.span(loadSecs/2, loadSecs)
	res.P99SecondHalf = time.Duration(h.Quantile(0.99))
	res.LoadErrors = om.errs.Load() + capErrs

	// What became of the sessions.
	st, err := idle.status(ctx, "check")
	if err != nil {
		return nil, err
	}
	for _, s := range append(sessions, by.s) {
		st.add(s)
	}
	res.Expired, res.Lost, res.FirstError = st.Expired, st.Lost+st.Resuming, st.FirstError
	return res, idle.closeSessions(ctx)
}

// setDefault sets *v to d if it is zero.
func setDefault[T int | float64 | time.Duration](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}

// driveLoad runs one goroutine per session for d: each asks next how many
// setData to send now (next blocks as it needs to; 0 after stop closes)
// and sends them on the session's connection to random keys, counted by m.
func driveLoad(ctx context.Context, sessions []*loadSession, keys []string, value []byte, m *loadMeter, d time.Duration, next func(i int, stop <-chan struct{}) int) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 37))
			for {
				k := next(i, stop)
				select {
				case <-stop:
					return
				default:
				}
				c := s.conn()
				for ; k > 0 && c != nil; k-- {
					m.send(i)
					if err := c.SetData(keys[rng.IntN(len(keys))], value, -1, classNone, m, int64(i)); err != nil {
						m.out[i].Add(-1) // not sent: the connection broke
						m.errs.Add(1)
					}
				}
				if c == nil { // resuming
					if sleepCtx(ctx, 50*time.Millisecond) != nil {
						return
					}
				}
			}
		}()
	}
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
	close(stop)
	for _, w := range m.wake { // wake goroutines waiting for a slot
		select {
		case w <- struct{}{}:
		default:
		}
	}
	wg.Wait()
}

// waitDrained waits until every request counted by m was answered, at
// most limit, and returns how long it took.
func waitDrained(m *loadMeter, limit time.Duration) time.Duration {
	start := time.Now()
	for m.outstanding() > 0 && time.Since(start) < limit {
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start)
}

// sampleEverySecond calls sample once a second, aligned on start (wall
// ns), until done; the returned function gives the samples so far, one
// per second.
func sampleEverySecond(sample func() []int64, start int64, done <-chan struct{}) func() [][]int64 {
	var mu sync.Mutex
	var out [][]int64
	if sample != nil {
		go func() {
			for i := 1; ; i++ {
				select {
				case <-time.After(time.Duration(start + int64(i)*int64(time.Second) - wallNanos())):
				case <-done:
					return
				}
				v := sample()
				mu.Lock()
				out = append(out, v)
				mu.Unlock()
			}
		}()
	}
	return func() [][]int64 {
		mu.Lock()
		defer mu.Unlock()
		return append([][]int64(nil), out...)
	}
}

// recovered looks for the first run of n bystander requests sent after
// from that were all answered within normal; it returns when the run
// began.
func (b *bystander) recovered(from int64, normal time.Duration, n int) (int64, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	run, began := 0, int64(0)
	for _, s := range b.samples {
		if s.at < from {
			continue
		}
		if !s.ok || s.lat > normal {
			run = 0
			continue
		}
		if run == 0 {
			began = s.at
		}
		if run++; run >= n {
			return began, true
		}
	}
	return 0, false
}
