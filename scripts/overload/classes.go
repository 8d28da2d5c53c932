package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/zkraft/zkraft/bench"
	"github.com/zkraft/zkraft/internal/testing/benchcluster"
)

// loadOptions are the bench load options for e.
func loadOptions(o *options, e *benchcluster.Ensemble) bench.LoadOptions {
	return bench.LoadOptions{Servers: e.Addrs(), Bin: o.bin, PerWorker: o.perWorker, SessionTimeout: o.sessionTimeout, Log: os.Stderr}
}

// warmJIT runs a load on a ZooKeeper ensemble before a class that
// depends on its steady speed (herd: watches; overload: writes), as
// scripts/benchcompare does before each workload.
func warmJIT(ctx context.Context, o *options, e *benchcluster.Ensemble, class string) error {
	if !e.IsZooKeeper() || o.jitWarmup <= 0 || (class != "herd" && class != "overload") {
		return nil
	}
	workload := map[string]string{"herd": "watch-fanout", "overload": "write"}[class]
	fmt.Printf("warming up ZooKeeper's JIT (%s, %v) ...\n", workload, o.jitWarmup)
	_, err := bench.Run(ctx, bench.Config{Servers: e.Addrs(), Workload: workload, Sessions: 16, Inflight: 32, ValueSize: 100,
		Keys: 1000, Duration: o.jitWarmup, Warmup: time.Second, ReadRatio: 0.9, Watchers: 1000, Nodes: 1, Ephemerals: 4,
		SessionTimeout: 10 * time.Second, Root: "/zkraft-bench", Seed: 1}, nil, nil)
	if err != nil {
		return fmt.Errorf("JIT warm-up: %w", err)
	}
	return nil
}

// profileMembers takes a CPU profile of every zkraft member of e over d
// into o.pprofDir (named after what); wait returns once all are written.
func profileMembers(o *options, e *benchcluster.Ensemble, what string, d time.Duration, only func(*benchcluster.Member) bool) (wait func()) {
	var wg sync.WaitGroup
	if o.pprofDir == "" || e.IsZooKeeper() {
		return wg.Wait
	}
	for _, m := range e.Members {
		if only != nil && !only(m) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := filepath.Join(o.pprofDir, fmt.Sprintf("%s-%s-member%d.pprof", what, e.Name, m.ID))
			f, err := os.Create(path)
			if err != nil {
				fmt.Fprintln(os.Stderr, "overload:", err)
				return
			}
			defer f.Close()
			if err := m.CPUProfile(d, f); err != nil {
				fmt.Fprintln(os.Stderr, "overload:", err)
				return
			}
			fmt.Println("  CPU profile:", path)
		}()
	}
	return wg.Wait
}

// herdRun measures the thundering herd of n watchers.
func herdRun(ctx context.Context, o *options, e *benchcluster.Ensemble, n int, run *run) error {
	wait := func() {}
	res, err := bench.RunHerd(ctx, bench.HerdConfig{LoadOptions: loadOptions(o, e), Watchers: n, Rounds: o.herdRounds, Warmup: 1,
		Armed: func() { wait = profileMembers(o, e, fmt.Sprintf("herd%d", n), 15*time.Second, nil) }, MemberCPU: e.CPUTime})
	wait()
	if err != nil {
		return err
	}
	med := res.Median()
	minRereads := n
	for _, r := range res.Rounds {
		minRereads = min(minRereads, r.Rereads)
	}
	run.figs = figures{
		{key: "reread", name: fmt.Sprintf("write → last re-read (median of %d rounds)", len(res.Rounds)), value: ms(med.LastReread), unit: "ms", lowerBetter: true},
		{key: "event", name: "write → last watcher notified (that round)", value: ms(med.LastEvent), unit: "ms", lowerBetter: true},
		{key: "bystander", name: "bystander p99 from each write to its last re-read", value: ms(res.Bystander.P99), unit: "ms", lowerBetter: true,
			note: fmt.Sprintf("%d requests in the rounds, %d failed", res.Bystander.N, res.Bystander.Failed)},
		{key: "quiet", name: "bystander p99 in the quiet second before", value: ms(res.Baseline.P99), unit: "ms", lowerBetter: true},
		{key: "membercpu", name: "the members' CPU in that round (all three)", value: ms(med.MemberCPU), unit: "ms", lowerBetter: true},
		{key: "clientcpu", name: "the watchers' client CPU in that round", value: ms(med.ClientCPU), unit: "ms"},
		{key: "connect", name: "connecting every watcher", value: res.Connect.Seconds(), unit: "s", lowerBetter: true},
		{key: "rereads", name: "watchers that re-read, fewest in a round", value: float64(minRereads), unit: "count"},
		{key: "lost", name: "watcher sessions lost (broken connections)", value: float64(res.Lost + res.Broken), unit: "count"},
	}
	return nil
}

// stormRun measures the reconnect storm of n sessions.
func stormRun(ctx context.Context, o *options, e *benchcluster.Ensemble, n int, run *run) error {
	wait := func() {}
	kill := func() (string, error) {
		victim := e.Leader()
		if o.stormKill == "follower" {
			victim = nil
			for _, m := range e.Members {
				if ok, mode, _ := m.Serving(0); ok && mode == "follower" {
					victim = m
					break
				}
			}
		}
		if victim == nil {
			return "", fmt.Errorf("no %s to kill", o.stormKill)
		}
		wait = profileMembers(o, e, fmt.Sprintf("storm%d", n), 20*time.Second, func(m *benchcluster.Member) bool { return m != victim })
		victim.Kill()
		return fmt.Sprintf("member %d, the %s", victim.ID, o.stormKill), nil
	}
	overflows := benchcluster.ListenOverflows()
	res, err := bench.RunStorm(ctx, bench.StormConfig{LoadOptions: loadOptions(o, e), Sessions: n, Kill: kill})
	overflows = benchcluster.ListenOverflows() - overflows
	wait()
	if err != nil {
		return err
	}
	run.figs = figures{
		{key: "back", name: fmt.Sprintf("kill -9 of the %s → every session resumed", o.stormKill), value: res.AllBack.Seconds(), unit: "s", lowerBetter: true},
		{key: "p50", name: "resumption after the kill, median session", value: res.ResumeP50.Seconds(), unit: "s", lowerBetter: true},
		{key: "p99", name: "resumption after the kill, p99", value: res.ResumeP99.Seconds(), unit: "s", lowerBetter: true,
			note: "by second after the kill, resumed: " + counts(res.ResumedBySecond) + "; their connections broken: " + counts(res.BrokeBySecond)},
		{key: "resumed", name: "sessions resumed", value: float64(res.Resumed), unit: "count"},
		{key: "attempts", name: "attempts to resume (each after a pause of up to a second)", value: float64(res.Attempts), unit: "count",
			note: kinds("failed", res.Failures)},
		{key: "broken", name: "connections broken (a session may break twice)", value: float64(res.Disconnects), unit: "count",
			note: kinds("broken", res.Breaks)},
		{key: "expired", name: "sessions expired", value: float64(res.Expired), unit: "count", note: res.FirstError},
		{key: "notback", name: "sessions neither resumed nor expired", value: float64(res.NotBack), unit: "count"},
		{key: "answering", name: "sessions answering a session timeout later", value: float64(res.Answering), unit: "count"},
		{key: "ephemerals", name: "their ephemerals still in the tree", value: float64(res.Ephemerals), unit: "count", note: res.Unserved},
		{key: "connect", name: "connecting every session (and its ephemeral)", value: res.Connect.Seconds(), unit: "s", lowerBetter: true},
		{key: "overflows", name: "connections dropped by full accept queues (the machine's ListenOverflows)", value: float64(overflows), unit: "count"},
	}
	return nil
}

// counts renders a list of counts.
func counts(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = thousands(int64(n))
	}
	return strings.Join(parts, " ")
}

// kinds lists counts by kind, after what.
func kinds(what string, m map[string]int) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, fmt.Sprintf("%s ×%s", k, thousands(int64(v))))
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		return ""
	}
	return what + ": " + strings.Join(parts, ", ")
}

// overloadRun measures the overload.
func overloadRun(ctx context.Context, o *options, e *benchcluster.Ensemble, _ int, run *run) error {
	sample := func() []int64 {
		v := make([]int64, len(e.Members))
		for i, m := range e.Members {
			v[i], _ = m.RSS()
		}
		return v
	}
	res, err := bench.RunOverload(ctx, bench.OverloadConfig{LoadOptions: loadOptions(o, e), Sessions: o.overloadSess, Idle: o.overloadIdle,
		Capacity: o.capacityTime, Factor: o.overloadFactor, Duration: o.overloadTime, Sample: sample})
	if err != nil {
		return err
	}
	peak, growth := rssFigures(res)
	figs := figures{
		{key: "capacity", name: "write capacity (setData/s, the best of 512, 2,048, 8,192 in flight)", value: res.Capacity, unit: "ops/s", higherBetter: true,
			note: fmt.Sprintf("best with %s in flight", thousands(int64(res.CapacityDepth)))},
		{key: "throughput", name: fmt.Sprintf("throughput with %.0fx the capacity offered (setData/s)", o.overloadFactor), value: res.Throughput, unit: "ops/s", higherBetter: true},
		{key: "held", name: "throughput / capacity", value: res.Throughput / res.Capacity, unit: "x", higherBetter: true},
		{key: "capp99", name: "setData p99 at capacity", value: ms(res.CapacityP99), unit: "ms", lowerBetter: true},
		{key: "p99a", name: "setData p99 in the overload's first half", value: ms(res.P99FirstHalf), unit: "ms", lowerBetter: true},
		{key: "p99b", name: "setData p99 in the overload's second half", value: ms(res.P99SecondHalf), unit: "ms", lowerBetter: true},
		{key: "quiet", name: "bystander p99 before the load", value: ms(res.Baseline.P99), unit: "ms", lowerBetter: true},
		{key: "bystander", name: "bystander p99 during the overload", value: ms(res.Bystander.P99), unit: "ms", lowerBetter: true,
			note: fmt.Sprintf("%d requests, %d failed", res.Bystander.N, res.Bystander.Failed)},
		{key: "peak", name: "largest member's RSS during the overload", value: peak, unit: "MiB", lowerBetter: true},
		{key: "growth", name: "a member's highest RSS in the second half over the first's", value: growth, unit: "MiB"},
		{key: "recovery", name: "load stopped → bystander back to normal", value: res.Recovery.Seconds(), unit: "s", lowerBetter: true,
			note: recoveryNote(res)},
		{key: "drain", name: "load stopped → its last reply", value: res.Drain.Seconds(), unit: "s", lowerBetter: true},
		{key: "heldback", name: "requests held back by full windows (not sent)", value: float64(res.HeldBack), unit: "count"},
		{key: "expired", name: fmt.Sprintf("sessions expired (of %d)", o.overloadSess+o.overloadIdle+1), value: float64(res.Expired), unit: "count", note: res.FirstError},
		{key: "lost", name: "sessions lost otherwise", value: float64(res.Lost), unit: "count"},
		{key: "errors", name: "setData answered with an error or lost", value: float64(res.LoadErrors), unit: "count"},
		{key: "client", name: "the load client's CPU during the overload (cores)", value: res.ClientCPU, unit: "cores"},
	}
	run.figs, run.overload = figs, res
	return nil
}

// recoveryNote says what the recovery waited for, or that it did not come.
func recoveryNote(res *bench.OverloadResult) string {
	if res.Recovery < 0 {
		return fmt.Sprintf("the bystander was not back within %v within a minute", res.Normal.Round(time.Microsecond))
	}
	return fmt.Sprintf("normal: 20 requests in a row within %v (twice the quiet p99, at least 2 ms more)", res.Normal.Round(time.Microsecond))
}

// rssFigures returns the largest member RSS over the overload's seconds
// and how much higher a member's RSS went in the overload's second half
// than in its first (0 if not): a garbage-collected heap rises and falls
// under a steady load, but its peaks stay where they were unless
// something grows, in MiB.
func rssFigures(res *bench.OverloadResult) (peak, growth float64) {
	secs := res.Seconds[:min(res.LoadSeconds, len(res.Seconds))]
	mid := len(secs) / 2
	for m := range secs[0].RSS {
		var first, second float64
		for i, s := range secs {
			if m >= len(s.RSS) {
				continue
			}
			v := mib(s.RSS[m])
			peak = max(peak, v)
			if i < mid {
				first = max(first, v)
			} else {
				second = max(second, v)
			}
		}
		growth = max(growth, second-first)
	}
	return peak, growth
}

// tableRun measures n idle sessions.
func tableRun(ctx context.Context, o *options, e *benchcluster.Ensemble, n int, run *run) error {
	settle := o.tableSettle
	time.Sleep(settle)
	before := memory(e)
	var after []memberMemory
	res, err := bench.RunTable(ctx, bench.TableConfig{LoadOptions: loadOptions(o, e), Sessions: n, Hold: func() error {
		time.Sleep(settle)
		after = memory(e)
		return nil
	}})
	if err != nil {
		return err
	}
	var rss, heap, anon int64
	for i := range before {
		rss += after[i].rss - before[i].rss
		anon += after[i].anon - before[i].anon
		heap += after[i].heap - before[i].heap
	}
	figs := figures{
		{key: "rss", name: "resident memory per session (all members)", value: float64(rss) / float64(n) / 1024, unit: "KiB", lowerBetter: true},
		{key: "anon", name: "of which anonymous (RssAnon)", value: float64(anon) / float64(n) / 1024, unit: "KiB", lowerBetter: true},
		{key: "connect", name: "connecting every session", value: res.Connect.Seconds(), unit: "s", lowerBetter: true},
		{key: "lost", name: "sessions lost while held", value: float64(res.Lost), unit: "count"},
	}
	if !e.IsZooKeeper() {
		figs = append(figs, figure{key: "heap", name: "Go heap and stacks per session (zkraft)", value: float64(heap) / float64(n) / 1024, unit: "KiB", lowerBetter: true})
	}
	run.figs = figs
	return nil
}

// memberMemory is what a member holds.
type memberMemory struct{ rss, anon, heap int64 }

// memory reads every member's RSS and, for zkraft, its live heap.
func memory(e *benchcluster.Ensemble) []memberMemory {
	out := make([]memberMemory, len(e.Members))
	for i, m := range e.Members {
		out[i].rss, out[i].anon = m.RSS()
		if !e.IsZooKeeper() {
			out[i].heap, _ = m.Heap()
		}
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func mib(b int64) float64 { return float64(b) / (1 << 20) }
