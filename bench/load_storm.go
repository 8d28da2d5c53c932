package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// StormConfig is the reconnect storm: Sessions sessions spread over the
// members, each owning an ephemeral znode and pinging from the moment it
// opens; Kill kills a member; every session whose connection breaks
// resumes on the others as ZooKeeper's client does (same id and password,
// its last zxid).
type StormConfig struct {
	LoadOptions
	Sessions int
	// Kill kills a member (kill -9); it is called once every session is
	// open and returns what it killed, for the report.
	Kill func() (string, error)
	// Watch is how long after the kill breaks are waited for (default:
	// the session timeout), so that connections that break late (a
	// member that stops answering rather than closing) are counted.
	Watch time.Duration
}

// StormResult is what became of the sessions.
type StormResult struct {
	Sessions int
	Connect  time.Duration // opening every session and its ephemeral
	Killed   string
	// Disconnects is how many connections broke (a session may break
	// more than once while it resumes).
	Disconnects int
	Resumed     int // sessions resumed on another connection
	Attempts    int // attempts to resume, successful or not
	// Failures are the failed attempts to resume and Breaks the broken
	// connections, by kind: "refused" (the killed member), "closed by
	// the member", "no answer in time"...
	Failures, Breaks map[string]int
	Expired          int // sessions a member answered were expired
	NotBack          int // sessions neither resumed nor expired when the run gave up
	// AllBack is the time from the kill to the last resumption, -1 when
	// some session neither resumed nor expired; ResumeP50 and ResumeP99
	// are over the resumed sessions (-1 without one).
	AllBack, ResumeP50, ResumeP99 time.Duration
	// ResumedBySecond counts the resumptions in each second after the
	// kill, BrokeBySecond the breaks of the connections of the sessions
	// that resumed.
	ResumedBySecond, BrokeBySecond []int
	// After a session timeout more, with every session resumed:
	Answering  int // sessions that answered a request
	Ephemerals int // the sessions' ephemerals still in the tree; -1 if no member served
	FirstError string
	// Unserved says why the ephemerals could not be counted: no member
	// served by then ("" when one did).
	Unserved string
}

// RunStorm runs the reconnect storm on cfg.Servers.
func RunStorm(ctx context.Context, cfg StormConfig) (*StormResult, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	if cfg.Sessions < 1 || cfg.Kill == nil {
		return nil, fmt.Errorf("bench: storm of %d sessions needs a Kill", cfg.Sessions)
	}
	if cfg.Watch <= 0 {
		cfg.Watch = cfg.SessionTimeout
	}
	dir := cfg.Root + "/storm"
	admin, err := dialAny(ctx, &cfg.LoadOptions)
	if err != nil {
		return nil, err
	}
	err = ensurePath(ctx, admin, dir)
	_ = admin.Close(2*time.Second, classNone) // the kill may take its member
	if err != nil {
		return nil, err
	}
	f, err := startFleet(&cfg.LoadOptions, cfg.Sessions)
	if err != nil {
		return nil, err
	}
	defer f.close()
	res := &StormResult{Sessions: cfg.Sessions}
	cfg.logf("storm: opening %d sessions in %d workers", cfg.Sessions, len(f.workers))
	if res.Connect, err = f.open(ctx, &cfg.LoadOptions, openSpec{resume: true, ephemerals: dir}); err != nil {
		return nil, err
	}
	if err := sleepCtx(ctx, 2*time.Second); err != nil {
		return nil, err
	}
	killedAt := wallNanos()
	if res.Killed, err = cfg.Kill(); err != nil {
		return nil, fmt.Errorf("bench: storm: kill: %w", err)
	}
	cfg.logf("storm: killed %s", res.Killed)
	giveUp := time.Duration(float64(cfg.SessionTimeout)*1.5) + 10*time.Second
	var st sessionCounts
	for {
		if err := sleepCtx(ctx, 200*time.Millisecond); err != nil {
			return nil, err
		}
		if st, err = f.status(ctx, "status"); err != nil {
			return nil, err
		}
		since := time.Duration(wallNanos() - killedAt)
		if (st.Resuming == 0 && since >= cfg.Watch) || since > cfg.Watch+giveUp {
			break
		}
	}
	res.Disconnects, res.Resumed, res.Expired, res.NotBack, res.FirstError = st.Disconnects, st.Resumed, st.Expired, st.Resuming+st.Lost, st.FirstError
	res.Attempts, res.Failures, res.Breaks = st.Attempts, st.Failures, st.Breaks
	switch {
	case res.NotBack > 0:
		res.AllBack = -1 // never, within the run
	case st.LastResume > killedAt:
		res.AllBack = time.Duration(st.LastResume - killedAt)
	}
	reps, err := f.all(ctx, func(int) workerRequest { return workerRequest{Op: "resumes", Since: killedAt} })
	if err != nil {
		return nil, err
	}
	var times, broke []int64
	byServer := map[string][]int64{}
	for _, r := range reps {
		times, broke = append(times, r.Resumes...), append(broke, r.Broke...)
		for i, on := range r.On {
			byServer[on] = append(byServer[on], r.Resumes[i])
		}
	}
	for _, addr := range cfg.Servers {
		if len(byServer[addr]) > 0 {
			cfg.logf("storm: resumed on %s, by second after the kill: %v", addr, bySecond(byServer[addr]))
		}
	}
	res.ResumeP50, res.ResumeP99 = time.Duration(quantile(times, 0.5)), time.Duration(quantile(times, 0.99))
	if len(times) == 0 {
		res.ResumeP50, res.ResumeP99 = -1, -1
	}
	res.ResumedBySecond, res.BrokeBySecond = bySecond(times), bySecond(broke)
	back := "not all back"
	if res.AllBack >= 0 {
		back = fmt.Sprintf("all back %v after the kill", res.AllBack.Round(time.Millisecond))
	}
	cfg.logf("storm: %d resumed (%s), %d expired, %d not back; waiting a session timeout", res.Resumed, back, res.Expired, res.NotBack)

	// A session a member wrongly let go expires within a session timeout
	// of its last resumption: look after one.
	if err := sleepCtx(ctx, time.Duration(max(st.LastResume, killedAt)-wallNanos())+cfg.SessionTimeout+2*time.Second); err != nil {
		return nil, err
	}
	st, err = f.status(ctx, "check")
	if err != nil {
		return nil, err
	}
	res.Answering, res.Expired, res.NotBack = st.Live, st.Expired, st.Resuming+st.Lost
	if res.FirstError == "" {
		res.FirstError = st.FirstError
	}
	// An ensemble that has not recovered (a reference server's election
	// can take longer than the run) is a finding, not a failed run.
	if res.Ephemerals, err = countChildren(ctx, &cfg.LoadOptions, dir); err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		res.Ephemerals = -1
		res.Unserved = fmt.Sprintf("no member served %v after the kill: %v", time.Duration(wallNanos()-killedAt).Round(time.Second), err)
		cfg.logf("storm: %s", res.Unserved)
	}
	return res, f.closeSessions(ctx)
}

// countChildren counts the znodes under path, on any member that answers.
func countChildren(ctx context.Context, o *LoadOptions, path string) (int, error) {
	c, err := dialAny(ctx, o)
	if err != nil {
		return 0, err
	}
	defer c.Close(2*time.Second, classNone)
	cnt := counter{ch: make(chan int64, 1)}
	if err := c.GetAllChildrenNumber(path, classNone, cnt, 0); err != nil {
		return 0, err
	}
	select {
	case n := <-cnt.ch:
		if n < 0 {
			return 0, fmt.Errorf("getAllChildrenNumber %s: %w", path, jute.ErrCode(n))
		}
		return int(n), nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// bySecond counts times (ns) by whole second.
func bySecond(times []int64) []int {
	var out []int
	for _, t := range times {
		sec := int(max(t, 0) / int64(time.Second))
		for len(out) <= sec {
			out = append(out, 0)
		}
		out[sec]++
	}
	return out
}
