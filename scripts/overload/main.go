// Command overload measures the load classes of issue 37 on a
// three-member Apache ZooKeeper 3.8 ensemble (Debian's package) and a
// three-member zkraft ensemble with the same zoo.cfg, on loopback on the
// same machine, in alternation, each run on a fresh ensemble:
//
//   - herd: N watchers hold a data watch on one znode; a write changes
//     it and every watcher re-reads it (re-arming its watch); the time
//     from the write to the last re-read, a bystander's p99 meanwhile,
//     sessions lost.
//   - storm: N sessions, each with an ephemeral, pinging; the leader (or
//     a follower) is killed with SIGKILL; the time until every session
//     has resumed on the others, and how many expired.
//   - overload: the write capacity, then three times it offered for a
//     while: throughput, latency, each member's RSS, sessions expired,
//     the recovery once the load stops.
//   - table: N idle sessions: memory per session and the time to connect
//     them all.
//
// It prints each figure for both servers and their ratio and writes the
// Markdown for docs/performance.md (make overload, which make bench
// runs). Sessions are held by `zkraft bench --worker` processes, at most
// -per-worker each, under the machine's open-file limit.
//
//	go run ./scripts/overload -zkraft bin/zkraft -quick                 # a minute or two
//	go run ./scripts/overload -zkraft bin/zkraft -out docs/overload-latest.md
//	go run ./scripts/overload -zkraft bin/zkraft -classes herd -herd 10000 -pprof-dir /tmp/prof
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zkraft/zkraft/bench"
	"github.com/zkraft/zkraft/internal/testing/benchcluster"
)

// options are the command's flags.
type options struct {
	bin, baseline   string
	zkJVM           []string // more java options for the ZooKeeper members (-zk-jvm-flags)
	classes         map[string]bool
	herd            []int
	herdRounds      int
	storm           int
	stormKill       string
	overloadTime    time.Duration
	capacityTime    time.Duration
	overloadFactor  float64
	overloadSess    int
	overloadIdle    int
	table           int
	tableSettle     time.Duration
	sessionTimeout  time.Duration
	perWorker       int
	jitWarmup       time.Duration
	pprofDir        string
	root            string
	keep            bool
	out             string
	quick           bool
	alone           bool // zkraft only, no reference ensemble
	logLevel        string
	refName, refTag string // the reference ensemble's benchcluster name and label
}

func main() {
	var o options
	var classes, herd string
	flag.StringVar(&o.bin, "zkraft", "bin/zkraft", "zkraft binary (servers, and the bench workers that hold the sessions)")
	flag.Func("zk-jvm-flags", "more java options for the ZooKeeper members, space separated (the end-to-end test starts them C1-only with SerialGC, to spend less CPU; a measurement leaves ZooKeeper's JIT as it is)",
		func(v string) error { o.zkJVM = strings.Fields(v); return nil })
	flag.StringVar(&o.baseline, "baseline", "", "another zkraft binary to run in Apache ZooKeeper's place (an A/B of two builds)")
	flag.StringVar(&classes, "classes", "herd,storm,overload,table", "load classes to run (comma separated)")
	flag.StringVar(&herd, "herd", "1000,10000,48000", "herd sizes: watcher sessions (comma separated; 16,000 per member at most under a 20,000 open-file limit, see -table)")
	flag.IntVar(&o.herdRounds, "herd-rounds", 3, "measured herd rounds per size and server (the table shows the median)")
	flag.IntVar(&o.storm, "storm", 32000, "reconnect storm: sessions (each survivor of a kill then holds half: 16,000, see -table)")
	flag.StringVar(&o.stormKill, "storm-kill", "leader", "the member the storm kills: leader or follower")
	flag.DurationVar(&o.overloadTime, "overload-time", 60*time.Second, "how long the overload offers its load")
	flag.DurationVar(&o.capacityTime, "capacity-time", 12*time.Second, "measuring the write capacity before the overload (three steps of in-flight requests)")
	flag.Float64Var(&o.overloadFactor, "overload-factor", 3, "the offered load, times the measured write capacity")
	flag.IntVar(&o.overloadSess, "overload-sessions", 64, "sessions offering the overload")
	flag.IntVar(&o.overloadIdle, "overload-idle", 1000, "idle sessions held through the overload (none may expire)")
	flag.IntVar(&o.table, "table", 48000, "connection table: idle sessions (16,000 per member: under a 20,000 open-file limit zkraft takes 16,124 clients a member)")
	flag.DurationVar(&o.tableSettle, "table-settle", 15*time.Second, "connection table: idle time before each memory reading (as scripts/memprobe's hold), so idle connections park and freed memory goes back")
	flag.DurationVar(&o.sessionTimeout, "session-timeout", 30*time.Second, "every session's requested timeout")
	flag.IntVar(&o.perWorker, "per-worker", 15000, "sessions per worker process at most (below the open-file limit)")
	flag.DurationVar(&o.jitWarmup, "jit-warmup", 10*time.Second, "a write load on ZooKeeper before each herd and overload run, for its JIT")
	flag.StringVar(&o.pprofDir, "pprof-dir", "", "write CPU profiles of the zkraft members during the herd's rounds and the storm here")
	flag.StringVar(&o.root, "dir", "", "where the ensembles' directories go (default: the system's temporary directory)")
	flag.BoolVar(&o.keep, "keep", false, "keep the ensembles' directories and logs")
	flag.StringVar(&o.out, "out", "", "also write the Markdown here")
	flag.StringVar(&o.logLevel, "log-level", "warn", "the zkraft members' --log-level (with -keep, their logs stay in -dir)")
	flag.BoolVar(&o.alone, "alone", false, "run zkraft alone, without the reference ensemble (no ratios): to look into one class")
	flag.BoolVar(&o.quick, "quick", false, "a quick run: herd 1000, storm 3000, overload 10s, table 5000, two herd rounds, 5 s of JIT warm-up")
	flag.Parse()
	o.classes = map[string]bool{}
	for _, c := range strings.Split(classes, ",") {
		if c = strings.TrimSpace(c); c != "" {
			o.classes[c] = true
		}
	}
	for _, s := range strings.Split(herd, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fail(fmt.Errorf("-herd %q: want sizes such as 1000,10000", herd))
		}
		o.herd = append(o.herd, n)
	}
	if o.quick {
		o.herd, o.herdRounds, o.storm, o.overloadTime, o.table, o.jitWarmup = []int{1000}, 2, 3000, 10*time.Second, 5000, 5*time.Second
	}
	if o.stormKill != "leader" && o.stormKill != "follower" {
		fail(fmt.Errorf("-storm-kill %q: leader or follower", o.stormKill))
	}
	o.refName, o.refTag = benchcluster.ZooKeeper, "ZooKeeper 3.8"
	if o.baseline != "" {
		o.refName, o.refTag = "baseline", "baseline"
	}
	root, err := os.MkdirTemp(o.root, "overload")
	if err != nil {
		fail(err)
	}
	o.root = root
	defer benchcluster.RunCleanups()
	benchcluster.CleanupOnSignal("overload")
	if o.keep {
		fmt.Println("keeping the ensembles' directories (logs) in", root)
	} else {
		benchcluster.AtExit(func() { os.RemoveAll(root) })
	}
	if o.pprofDir != "" {
		if err := os.MkdirAll(o.pprofDir, 0o755); err != nil {
			fail(err)
		}
	}
	var lim syscall.Rlimit
	_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
	r := &report{opts: &o, started: time.Now(), nofile: lim.Cur}
	ctx := context.Background()
	if o.classes["table"] {
		r.add(runClass(ctx, &o, "table", o.table, 0, tableRun))
	}
	if o.classes["herd"] {
		for i, n := range o.herd {
			r.add(runClass(ctx, &o, "herd", n, i, herdRun))
		}
	}
	if o.classes["storm"] {
		r.add(runClass(ctx, &o, "storm", o.storm, 1, stormRun))
	}
	if o.classes["overload"] {
		r.add(runClass(ctx, &o, "overload", 0, 0, overloadRun))
	}
	md := r.markdown()
	fmt.Println()
	fmt.Print(md)
	if o.out != "" {
		if err := os.WriteFile(o.out, []byte(md), 0o644); err != nil {
			fail(err)
		}
	}
}

// fail reports err and ends the run, stopping the ensembles.
func fail(err error) { benchcluster.Fail("overload", err) }

// run is one class at one size on one server.
type run struct {
	server string // benchcluster name: zookeeper, baseline or zkraft
	load   float64
	steal  float64 // share of the machine's CPU time stolen by the hypervisor
	figs   figures
	// overload is the overload's result, for the report's seconds.
	overload *bench.OverloadResult
}

// classRunner measures one class on a serving ensemble e into r.
type classRunner func(ctx context.Context, o *options, e *benchcluster.Ensemble, n int, r *run) error

// runClass runs class at size n on a fresh ensemble of each server, the
// two in the order turn gives.
func runClass(ctx context.Context, o *options, class string, n, turn int, measure classRunner) classRuns {
	cr := classRuns{class: class, n: n}
	order := []string{o.refName, "zkraft"}
	if turn%2 == 1 {
		order[0], order[1] = order[1], order[0]
	}
	if o.alone {
		order = []string{"zkraft"}
	}
	for _, server := range order {
		e := startEnsemble(o, class, n, server)
		if err := warmJIT(ctx, o, e, class); err != nil {
			fail(err)
		}
		fmt.Printf("%s %s (load average %.2f) ...\n", class, label(o, server, n), benchcluster.LoadAverage())
		run := run{server: server, load: benchcluster.LoadAverage()}
		stolen, t0 := benchcluster.StealTime(), time.Now()
		if err := measure(ctx, o, e, n, &run); err != nil {
			fail(fmt.Errorf("%s on %s: %w%s", class, server, err, memberLogs(e)))
		}
		run.steal = float64(benchcluster.StealTime()-stolen) / float64(time.Since(t0)*time.Duration(runtime.NumCPU()))
		for _, f := range run.figs {
			fmt.Printf("  %-55s %s\n", f.name, f.format(f.value))
		}
		e.Stop()
		cr.runs = append(cr.runs, run)
	}
	return cr
}

// label names a server and size for progress lines.
func label(o *options, server string, n int) string {
	name := "zkraft"
	if server != "zkraft" {
		name = o.refTag
	}
	if n > 0 {
		return fmt.Sprintf("%s, %d sessions", name, n)
	}
	return name
}

// seq numbers the ensembles of a run, for their directories.
var seq int

// startEnsemble starts a fresh three-member ensemble of server for a
// class and waits until it serves.
func startEnsemble(o *options, class string, n int, server string) *benchcluster.Ensemble {
	seq++
	bin := o.bin
	if server == "baseline" {
		bin = o.baseline
	}
	e, err := benchcluster.New(benchcluster.Config{
		Name: server, Root: filepath.Join(o.root, fmt.Sprintf("%02d-%s-%d", seq, class, n)), Bin: bin, Size: 3,
		// Sessions of up to a minute (ZooKeeper's default maximum is 20
		// ticks, 40 s), profiles for the heap per session and -pprof-dir.
		Settings: []string{"maxSessionTimeout=60000"}, Pprof: true, LogLevel: o.logLevel, JVMFlags: o.zkJVM,
	})
	if err != nil {
		fail(err)
	}
	if err := e.Start(); err != nil {
		fail(err)
	}
	benchcluster.AtExit(e.Stop)
	if _, err := e.WaitServing(2*time.Minute, 0); err != nil {
		fail(err)
	}
	return e
}

// memberLogs is the end of every member's log, for a failed run's error.
func memberLogs(e *benchcluster.Ensemble) string {
	var b strings.Builder
	for _, m := range e.Members {
		fmt.Fprintf(&b, "\nmember %d's log ends:\n%s", m.ID, benchcluster.LogTail(m.LogPath(), 15))
	}
	return b.String()
}
