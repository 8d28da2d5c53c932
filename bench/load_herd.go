package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// HerdConfig is the thundering herd: Watchers sessions spread over the
// members each hold a data watch on one znode; a writer changes it and
// every watcher re-reads it at once (getData with a watch, which re-arms
// it), while a bystander session goes on with its own reads and writes.
type HerdConfig struct {
	LoadOptions
	Watchers int
	Rounds   int           // measured rounds (default 3)
	Warmup   int           // rounds before them, not measured (default 1)
	Gap      time.Duration // quiet time before each round (default 1 s)
	// Armed is called (if set) once every watch is armed, before the
	// first round: a caller's moment to start profiling the members.
	Armed func()
	// MemberCPU (if set) returns the CPU time the members have used so
	// far, so that each round can tell the servers' share of its work
	// from the watchers'.
	MemberCPU func() time.Duration
}

// HerdResult is a herd's rounds.
type HerdResult struct {
	Watchers int
	Connect  time.Duration // opening every watcher's session
	Rounds   []HerdRound
	// Baseline is the bystander's latency in the quiet second before the
	// first round; Bystander its latency in the measured rounds, each
	// from the write to the last re-read.
	Baseline, Bystander Latency
	Broken              int // watcher connections that broke during the run
	Lost                int // watcher sessions gone at the end (expired or not answering)
	// Unexpected counts notifications other than the znode's change.
	Unexpected int
}

// HerdRound is one write and its re-reads.
type HerdRound struct {
	LastEvent  time.Duration // the write sent → the last watcher notified
	LastReread time.Duration // the write sent → the last re-read answered
	Rereads    int           // watchers whose re-read was answered
	BadRereads int           // re-reads answered with an error
	// Bystander is the bystander's latency from the write to the last
	// re-read.
	Bystander Latency
	// MemberCPU and ClientCPU are the CPU time the members (if
	// HerdConfig.MemberCPU) and the watchers' processes used in the
	// round: on a machine they share, the round cannot be shorter than
	// the two together divided by its cores.
	MemberCPU, ClientCPU time.Duration
	at                   int64 // wall ns of the write
}

// Median is the round with the median LastReread.
func (r *HerdResult) Median() HerdRound {
	if len(r.Rounds) == 0 {
		return HerdRound{}
	}
	rounds := slices.Clone(r.Rounds)
	slices.SortFunc(rounds, func(a, b HerdRound) int { return cmp.Compare(a.LastReread, b.LastReread) })
	return rounds[len(rounds)/2]
}

// RunHerd runs the thundering herd on cfg.Servers.
func RunHerd(ctx context.Context, cfg HerdConfig) (*HerdResult, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	if cfg.Watchers < 1 {
		return nil, fmt.Errorf("bench: herd of %d watchers", cfg.Watchers)
	}
	if cfg.Rounds <= 0 {
		cfg.Rounds = 3
	}
	if cfg.Warmup < 0 {
		cfg.Warmup = 0
	} else if cfg.Warmup == 0 {
		cfg.Warmup = 1
	}
	if cfg.Gap <= 0 {
		cfg.Gap = time.Second
	}
	target := cfg.Root + "/herd"
	value := makeValue(100)
	admin, err := dialAny(ctx, &cfg.LoadOptions)
	if err != nil {
		return nil, err
	}
	defer admin.Close(2*time.Second, classNone)
	if err := ensurePath(ctx, admin, target); err != nil {
		return nil, err
	}
	writer, err := dial(ctx, dialOptions{addr: cfg.Servers[1%len(cfg.Servers)], timeout: cfg.SessionTimeout, dialWait: cfg.SessionTimeout / 2, inflight: 4})
	if err != nil {
		return nil, err
	}
	defer writer.Close(2*time.Second, classNone)
	by, err := startBystander(ctx, &cfg.LoadOptions, cfg.Root+"/bystander", value)
	if err != nil {
		return nil, err
	}
	defer by.close()

	f, err := startFleet(&cfg.LoadOptions, cfg.Watchers)
	if err != nil {
		return nil, err
	}
	defer f.close()
	res := &HerdResult{Watchers: cfg.Watchers}
	cfg.logf("herd: opening %d watcher sessions in %d workers", cfg.Watchers, len(f.workers))
	if res.Connect, err = f.open(ctx, &cfg.LoadOptions, openSpec{watch: target}); err != nil {
		return nil, err
	}
	reps, err := f.each(ctx, "arm")
	if err != nil {
		return nil, err
	}
	armed := 0
	for _, r := range reps {
		armed += r.Armed
	}
	if armed != cfg.Watchers {
		return nil, fmt.Errorf("bench: herd: %d of %d watches armed", armed, cfg.Watchers)
	}
	if cfg.Armed != nil {
		cfg.Armed()
	}
	quiet := wallNanos()
	for round := 0; round < cfg.Warmup+cfg.Rounds; round++ {
		if err := sleepCtx(ctx, cfg.Gap); err != nil {
			return nil, err
		}
		if round == cfg.Warmup {
			res.Baseline = by.window(max(quiet, wallNanos()-int64(time.Second)), wallNanos())
		}
		r, err := herdRound(ctx, &cfg, f, writer, target, value, by)
		if err != nil {
			return nil, err
		}
		cfg.logf("herd: round %d: last re-read %v after the write, %d of %d re-read, bystander p99 %v",
			round+1, r.LastReread.Round(time.Millisecond), r.Rereads, cfg.Watchers, r.Bystander.P99.Round(time.Microsecond))
		if round >= cfg.Warmup {
			res.Rounds = append(res.Rounds, r)
		}
		if r.Rereads+r.BadRereads < cfg.Watchers {
			break // watches left armed would fire in the next round
		}
	}
	var spans [][2]int64
	for _, r := range res.Rounds {
		spans = append(spans, [2]int64{r.at, r.at + int64(r.LastReread)})
	}
	res.Bystander = by.windows(spans...)
	reps, err = f.each(ctx, "herd")
	if err != nil {
		return nil, err
	}
	for _, r := range reps {
		res.Broken += r.Broken
		res.Unexpected += r.Herd.Unexpected
	}
	st, err := f.status(ctx, "check")
	if err != nil {
		return nil, err
	}
	res.Lost = cfg.Watchers - st.Live
	return res, f.closeSessions(ctx)
}

// herdRound changes target once and waits until every watcher re-read it
// (or a session timeout passed).
func herdRound(ctx context.Context, cfg *HerdConfig, f *fleet, writer *conn, target string, value []byte, by *bystander) (HerdRound, error) {
	var r HerdRound
	reps, err := f.each(ctx, "round")
	if err != nil {
		return r, err
	}
	cpu0, members0 := f.cpu(reps), memberCPU(cfg)
	t := &tally{}
	t0 := wallNanos()
	if err := writer.SetData(target, value, -1, classNone, t, 0); err != nil {
		return r, fmt.Errorf("bench: herd write: %w", err)
	}
	deadline := time.Now().Add(cfg.SessionTimeout)
	for {
		if err := sleepCtx(ctx, 20*time.Millisecond); err != nil {
			return r, err
		}
		reps, err := f.each(ctx, "herd")
		if err != nil {
			return r, err
		}
		sum, broken := herdCounts{}, 0
		for _, rep := range reps {
			sum.Rereads += rep.Herd.Rereads
			sum.BadRereads += rep.Herd.BadRereads
			sum.LastEvent = max(sum.LastEvent, rep.Herd.LastEvent)
			sum.LastReread = max(sum.LastReread, rep.Herd.LastReread)
			broken += rep.Broken
		}
		if sum.Rereads+sum.BadRereads+broken >= cfg.Watchers || time.Now().After(deadline) {
			r.ClientCPU, r.MemberCPU = f.cpu(reps)-cpu0, memberCPU(cfg)-members0
			r.Rereads, r.BadRereads = sum.Rereads, sum.BadRereads
			r.LastEvent, r.LastReread = time.Duration(sum.LastEvent-t0), time.Duration(sum.LastReread-t0)
			break
		}
	}
	if err := t.check("herd write"); err != nil {
		return r, err
	}
	r.at = t0
	r.Bystander = by.window(t0, t0+int64(r.LastReread))
	return r, nil
}

// memberCPU is cfg.MemberCPU's answer, 0 without it.
func memberCPU(cfg *HerdConfig) time.Duration {
	if cfg.MemberCPU == nil {
		return 0
	}
	return cfg.MemberCPU()
}

// dialAny connects a session to the first of o.Servers that answers.
func dialAny(ctx context.Context, o *LoadOptions) (*conn, error) {
	var errs []error
	for _, addr := range o.Servers {
		c, err := dial(ctx, dialOptions{addr: addr, timeout: o.SessionTimeout, dialWait: 10 * time.Second, inflight: 64})
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("bench: no server answers: %w", errors.Join(errs...))
}

// sleepCtx sleeps d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
