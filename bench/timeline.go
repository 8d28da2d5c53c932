package bench

import (
	"fmt"
	"time"
)

// timelineTick is how often the timeline samples the counters; it is also
// the resolution of the longest stall.
const timelineTick = 100 * time.Millisecond

// timeline samples the recorders during the measurement: successful ops per
// second, and the longest time no reply at all arrived (a stalled server).
type timeline struct {
	r      *run
	silent bool // the workload sends no measured requests: no stalls to report
	stop   chan struct{}
	done   chan struct{}

	// written by loop, read after done is closed
	perSecond []uint64
	// latency is each class's median and p99 in each whole second
	// (perSecond's seconds); prev the class's samples at the last second.
	latency [numClasses][]LatencySecond
	prev    [numClasses]*HistSnapshot
	stall   time.Duration // longest period without any reply
	stallAt time.Duration // when it began, from the start of the measurement
}

func startTimeline(r *run, silent bool) *timeline {
	t := &timeline{r: r, silent: silent, stop: make(chan struct{}), done: make(chan struct{})}
	go t.loop()
	return t
}

// finish stops sampling and fills the result.
func (t *timeline) finish(res *Result) {
	close(t.stop)
	<-t.done
	res.PerSecond = t.perSecond
	for i := range res.Ops {
		for c := classNone + 1; c < numClasses; c++ {
			if c.String() == res.Ops[i].Op {
				res.Ops[i].PerSecond = t.latency[c]
			}
		}
	}
	res.LongestStallMs = ms(float64(t.stall))
	if t.stall >= time.Second && !t.silent {
		res.Notes = append(res.Notes, fmt.Sprintf("no reply at all for %.1fs, from %.1fs into the measurement",
			t.stall.Seconds(), t.stallAt.Seconds()))
	}
}

// counts sums replies of any kind and measured successful ops.
func (t *timeline) counts() (live int64, ops uint64) {
	for _, rec := range t.r.recorders() {
		live += rec.live.Load()
		for c := range numClasses {
			ops += uint64(rec.ops[c].Load())
		}
	}
	return live, ops
}

func (t *timeline) loop() {
	defer close(t.done)
	tick := time.NewTicker(timelineTick)
	defer tick.Stop()
	started := false
	var lastLive, changed, secondAt int64
	var secondOps uint64
	for {
		select {
		case <-t.stop:
			return
		case <-tick.C:
		}
		now := nowNanos()
		start := t.r.win.start.Load()
		if now < start || now > t.r.win.end.Load() {
			continue
		}
		live, ops := t.counts()
		if !started {
			started, lastLive, changed, secondAt, secondOps = true, live, now, now, ops
			t.latencySecond(false)
			continue
		}
		if live != lastLive {
			lastLive, changed = live, now
		} else if gap := time.Duration(now - changed); gap > t.stall {
			t.stall, t.stallAt = gap, time.Duration(changed-start)
		}
		if time.Duration(now-secondAt) >= time.Second {
			t.perSecond = append(t.perSecond, ops-secondOps)
			t.latencySecond(true)
			secondAt, secondOps = now, ops
		}
	}
}

// latencySecond snapshots every class's samples and, if record, appends
// the median and p99 of those recorded since the last snapshot (a class
// first seen now counts from zero; the seconds before it are zeros).
func (t *timeline) latencySecond(record bool) {
	recs := t.r.recorders()
	for c := classNone + 1; c < numClasses; c++ {
		s := &HistSnapshot{}
		for _, rec := range recs {
			rec.snapshot(c, s)
		}
		prev := t.prev[c]
		if prev == nil {
			prev = &HistSnapshot{}
		}
		if record && (s.Total > 0 || t.latency[c] != nil) {
			if t.latency[c] == nil { // seconds before the class's first sample
				t.latency[c] = make([]LatencySecond, len(t.perSecond)-1)
			}
			t.latency[c] = append(t.latency[c], s.Sub(prev).Second())
		}
		t.prev[c] = s
	}
}
