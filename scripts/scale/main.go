// Command scale measures issue 40's large trees: it populates a tree of
// -nodes znodes of 100 bytes shaped like a real ensemble's
// (bench/treeshape: a few applications, subtrees of depth 2-6, some
// directories of thousands, one of 50,000+) into a three-member ensemble
// on loopback (internal/testing/benchcluster, as `make bench` starts
// them), while one session writes steadily, and reports resident memory,
// snapshot time and size, a new follower's catch-up, getChildren of the
// widest directory, restart to serving, and the writer's longest stall
// in each phase; for zkraft also `zkraft snapshot save|inspect|restore`.
// It runs Apache ZooKeeper and zkraft at -compare znodes (the largest
// both hold on the machine) and zkraft alone at -nodes, and prints a
// Markdown table.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/zkraft/zkraft/bench/treeshape"
	"github.com/zkraft/zkraft/internal/testing/benchcluster"
)

// figures are one ensemble's measurements at one size.
type figures struct {
	populate         time.Duration
	populateAttempts int   // > 1: populate was run again after the ensemble lost its quorum
	rss, anon        int64 // largest member's, bytes
	snapMs           float64
	snapCount        int64
	snapSize         int64
	snapStall        time.Duration
	populateStall    time.Duration
	steadyStall      time.Duration
	childrenMedian   time.Duration
	childrenMax      time.Duration
	children         int
	catchUp          time.Duration
	catchUpStall     time.Duration
	installed        bool // the follower caught up by a snapshot (zkraft's log says so; ZooKeeper's: assumed)
	restart          time.Duration
	save, inspect    time.Duration
	restore          time.Duration
	saveSize         int64
	restoreSize      int64
	saveStall        time.Duration
	writerErrors     int
	loadAvgAtFinish  float64
}

type options struct {
	bin      string
	root     string
	members  int
	settle   time.Duration
	jvmFlags []string
	// saveAlone: zkraft's snapshot save from one member with the others
	// stopped, after the restart, instead of from the leader of the
	// running ensemble.
	saveAlone bool
	// krSettings are zoo.cfg lines for zkraft's members only.
	krSettings []string
}

// splitList splits a comma-separated list, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

func main() {
	bin := flag.String("zkraft", "bin/zkraft", "zkraft binary (server, bench and snapshot commands)")
	nodes := flag.Int("nodes", 10_000_000, "znodes for zkraft's run alone (0: none)")
	compare := flag.Int("compare", 1_000_000, "znodes for the side-by-side run of ZooKeeper and zkraft (0: none)")
	members := flag.Int("members", 3, "members per ensemble")
	settle := flag.Duration("settle", 30*time.Second, "idle time (but for the writer) after populating, before memory is read")
	krSettings := flag.String("zkraft-settings", "", "more zoo.cfg lines for zkraft members, comma separated (e.g. forceSync=no,syncLimit=30 on a machine whose disk stalls for seconds)")
	saveAlone := flag.Bool("save-alone", false, "zkraft's snapshot save from one member with the others stopped (after the restart): the copy and the check of a 10M tree do not fit beside three members in 24 GiB")
	jvm := flag.String("zk-jvm", "", "more java options for ZooKeeper members, space separated (e.g. -Xmx5g)")
	dir := flag.String("dir", "", "where the ensembles' directories go (default: the system's temporary directory)")
	out := flag.String("out", "", "also write the Markdown table here")
	minAvail := flag.Int64("min-available", 3072, "MiB of memory the machine must keep available; below it the run stops")
	flag.Parse()
	root, err := os.MkdirTemp(*dir, "scale")
	if err != nil {
		benchcluster.Fail("scale", err)
	}
	defer benchcluster.RunCleanups()
	benchcluster.CleanupOnSignal("scale")
	benchcluster.AtExit(func() { os.RemoveAll(root) })
	guardMemory(*minAvail << 20)
	o := options{saveAlone: *saveAlone, krSettings: splitList(*krSettings), bin: *bin, root: root, members: *members, settle: *settle, jvmFlags: strings.Fields(*jvm)}
	started := time.Now().UTC()
	var zkF, krF, bigF *figures
	if *compare > 0 {
		for _, name := range []string{benchcluster.ZooKeeper, "zkraft"} {
			f, err := run(o, name, *compare)
			if err != nil {
				benchcluster.Fail("scale", err)
			}
			if name == benchcluster.ZooKeeper {
				zkF = f
			} else {
				krF = f
			}
		}
	}
	if *nodes > 0 && *nodes != *compare {
		f, err := run(o, "zkraft", *nodes)
		if err != nil {
			benchcluster.Fail("scale", err)
		}
		bigF = f
	}
	table := render(zkF, krF, bigF, *compare, *nodes, *members, started)
	if slices.Contains(o.krSettings, "forceSync=no") {
		table = strings.Replace(table, ", fsync on;", ", zkraft's log not fsynced;", 1)
	}
	if len(o.krSettings) > 0 {
		table = fmt.Sprintf("zkraft's members ran with %s in zoo.cfg.\n\n", strings.Join(o.krSettings, ", ")) + table
	}
	fmt.Print(table)
	if *out != "" {
		if err := os.WriteFile(*out, []byte(table), 0o644); err != nil {
			benchcluster.Fail("scale", err)
		}
	}
}

// run measures one ensemble of name ("zookeeper" or "zkraft") at nodes
// znodes and stops it.
func run(o options, name string, nodes int) (*figures, error) {
	logf := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "%s %s %d: %s\n", time.Now().UTC().Format("15:04:05"), name, nodes, fmt.Sprintf(format, args...))
	}
	cfg := benchcluster.Config{Name: name, Bin: o.bin, Root: filepath.Join(o.root, fmt.Sprint(nodes)), Size: o.members}
	zookeeper := name == benchcluster.ZooKeeper
	if zookeeper {
		cfg.JVMFlags = o.jvmFlags
	} else {
		cfg.Admin, cfg.LogLevel = true, "info" // info: "snapshot installed" shows how a follower caught up
		cfg.Settings = append([]string{"admin.rateLimiterIntervalInMS=0"}, o.krSettings...)
	}
	e, err := benchcluster.New(cfg)
	if err != nil {
		return nil, err
	}
	if err := e.Start(); err != nil {
		return nil, err
	}
	benchcluster.AtExit(e.Stop)
	defer func() { e.Stop(); os.RemoveAll(cfg.Root) }()
	if _, err := e.WaitServing(2*time.Minute, 0); err != nil {
		return nil, err
	}
	l := e.Leader()
	if l == nil {
		return nil, fmt.Errorf("%s: no leader", name)
	}
	w, err := startWriter(l.ClientAddr)
	if err != nil {
		return nil, err
	}
	defer func() {
		if w != nil {
			w.stop()
		}
	}()
	f := &figures{}

	w.phase("populate")
	logf("populating")
	if err := populate(o, e, nodes, f, logf); err != nil {
		return nil, err
	}
	if l = e.Leader(); l == nil { // it may have changed if the ensemble lost its quorum
		return nil, fmt.Errorf("%s: no leader", name)
	}
	w.phase("settle")
	logf("populated in %v; settling", f.populate)
	time.Sleep(o.settle)
	for _, m := range e.Members {
		if r, a := m.RSS(); r > f.rss {
			f.rss, f.anon = r, a
		}
	}
	logf("largest member's RSS %d MiB (anonymous %d MiB)", f.rss>>20, f.anon>>20)

	// A snapshot on every member while the writer and 32 more sessions
	// write: zkraft's forced at once through the AdminServer, ZooKeeper's
	// when the pump's writes reach its snapCount.
	w.phase("steady")
	time.Sleep(10 * time.Second)
	before := map[int]snapTimes{}
	for _, m := range e.Members {
		before[m.ID] = mntrSnapTimes(m)
	}
	w.phase("snapshot")
	logf("snapshots")
	stopPump := make(chan struct{})
	pumpDone := make(chan error, 1)
	go func() { pumpDone <- pump(l.ClientAddr, stopPump) }()
	if !zookeeper {
		time.Sleep(2 * time.Second)
		if err := forceSnapshots(e); err != nil {
			close(stopPump)
			return nil, err
		}
	}
	deadline := time.Now().Add(10 * time.Minute)
	for {
		all := true
		for _, m := range e.Members {
			if mntrSnapTimes(m).count == before[m.ID].count {
				all = false
			}
		}
		if all || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(time.Second)
	close(stopPump)
	if err := <-pumpDone; err != nil {
		return nil, err
	}
	for _, m := range e.Members {
		a, b := mntrSnapTimes(m), before[m.ID]
		if a.count > b.count {
			f.snapMs = max(f.snapMs, float64(a.sumMs-b.sumMs)/float64(a.count-b.count))
			f.snapCount += a.count - b.count
		}
		f.snapSize = max(f.snapSize, snapshotSize(m, zookeeper))
	}
	logf("snapshots: %d, slowest member's %.0f ms, newest file %d MiB", f.snapCount, f.snapMs, f.snapSize>>20)
	w.phase("children")
	widest := "/zkraft-bench/tree/app00/queues/widest"
	f.childrenMedian, f.childrenMax, f.children, err = getChildren(l.ClientAddr, widest, 20)
	if err != nil {
		return nil, err
	}
	if f.children != treeshape.Widest(nodes) {
		return nil, fmt.Errorf("%s: %s has %d children, want %d", name, widest, f.children, treeshape.Widest(nodes))
	}

	saved := filepath.Join(o.root, "saved.snap")
	defer os.Remove(saved)
	if !zookeeper && !o.saveAlone {
		w.phase("save")
		logf("snapshot save")
		if f.save, err = timed(o.bin, "snapshot", "save", "--admin-addr", l.AdminAddr, "--auth", "ip:", "--timeout", "20m", saved); err != nil {
			return nil, err
		}
		f.saveSize = fileSize(saved)
	}

	w.phase("catchup")
	var follower *benchcluster.Member
	for _, m := range e.Members {
		if m != l {
			follower = m
		}
	}
	if follower != nil {
		logf("catch-up of member %d", follower.ID)
		if f.catchUp, err = catchUp(e, follower, nodes, 20*time.Minute); err != nil {
			return nil, err
		}
		f.installed = zookeeper || strings.Contains(benchcluster.LogTail(follower.LogPath(), 1000), "snapshot installed")
	}
	w.phase("after")
	time.Sleep(5 * time.Second)
	f.populateStall, _, f.writerErrors = w.stall("populate")
	f.steadyStall, _, _ = w.stall("steady")
	f.snapStall, _, _ = w.stall("snapshot")
	f.catchUpStall, _, _ = w.stall("catchup")
	f.saveStall, _, _ = w.stall("save")
	w.stop()
	w = nil

	logf("restart")
	e.Stop()
	if err := e.Start(); err != nil {
		return nil, err
	}
	if f.restart, err = e.WaitServing(20*time.Minute, nodes); err != nil {
		return nil, err
	}
	f.loadAvgAtFinish = benchcluster.LoadAverage()
	if !zookeeper && o.saveAlone {
		// Save from one member with the others stopped: the copy the
		// member takes and the reading back of the file do not fit
		// beside three members of the largest trees.
		for _, m := range e.Members[1:] {
			m.Kill()
		}
		logf("snapshot save from member %d alone", e.Members[0].ID)
		if f.save, err = timed(o.bin, "snapshot", "save", "--admin-addr", e.Members[0].AdminAddr, "--auth", "ip:", "--timeout", "20m", saved); err != nil {
			return nil, err
		}
		f.saveSize, f.saveStall = fileSize(saved), -1
	}
	if !zookeeper { // with the ensemble stopped, so that its memory is not needed twice
		e.Stop()
		if err := inspectRestore(o, saved, f); err != nil {
			return nil, err
		}
	}
	logf("done: %+v", *f)
	return f, nil
}

// populate creates the tree with `zkraft bench --workload populate`; if
// that fails (its sessions are closed when the ensemble loses its quorum,
// as a machine stalled for tens of seconds makes it), it waits for the
// ensemble to serve again and runs it again (existing znodes are
// skipped), at most three times, and checks the count at the end.
func populate(o options, e *benchcluster.Ensemble, nodes int, f *figures, logf func(string, ...any)) error {
	for attempt := 1; ; attempt++ {
		d, err := timed(o.bin, "bench", "--server", e.Servers(), "--workload", "populate", "--shape", "realistic",
			"--nodes", fmt.Sprint(nodes), "--value-size", "100", "--keep", "--session-timeout", "40s", "--json", "--no-progress",
			"--duration", "10h")
		f.populate += d
		if err == nil {
			break
		}
		if attempt == 3 {
			return err
		}
		msg := err.Error()
		if len(msg) > 600 {
			msg = "..." + msg[len(msg)-600:]
		}
		logf("populate attempt %d failed after %v: %s; waiting for the ensemble to serve again", attempt, d, msg)
		f.populateAttempts = attempt + 1
		if _, err := e.WaitServing(10*time.Minute, 0); err != nil {
			return err
		}
	}
	for _, m := range e.Members {
		if ok, mode, n := m.Serving(nodes); !ok {
			return fmt.Errorf("%s member %d (%s) has %d znodes after populate, want at least %d", e.Name, m.ID, mode, n, nodes)
		}
	}
	return nil
}

// inspectRestore times `zkraft snapshot inspect` and `restore` of the
// file `snapshot save` wrote.
func inspectRestore(o options, file string, f *figures) error {
	var err error
	if f.inspect, err = timed(o.bin, "snapshot", "inspect", file); err != nil {
		return err
	}
	restored := filepath.Join(o.root, "restored")
	defer os.RemoveAll(restored)
	if f.restore, err = timed(o.bin, "snapshot", "restore", "--data-dir", restored, file); err != nil {
		return err
	}
	f.restoreSize = dirSize(restored)
	return nil
}

// render is the Markdown table: ZooKeeper and zkraft at compare znodes
// with their ratio, and zkraft alone at nodes.
func render(zkF, krF, bigF *figures, compare, nodes, members int, started time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured %s-%s UTC on %s (%d CPUs), %d members each on loopback, fsync on; load average at the end %.1f.\n\n",
		started.Format("2006-01-02 15:04"), time.Now().UTC().Format("15:04"), runtime.GOOS, runtime.NumCPU(), members, lastLoad(zkF, krF, bigF))
	mib := func(v int64) string { return fmt.Sprintf("%.0f MiB", float64(v)/(1<<20)) }
	sec := func(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
	ms := func(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d.Microseconds())/1000) }
	type rowDef struct {
		what string
		val  func(*figures) (string, float64)
	}
	rows := []rowDef{
		{"populate (pipelined creates, 16 sessions × 32)", func(f *figures) (string, float64) {
			again := ""
			if f.populateAttempts > 1 {
				again = fmt.Sprintf(" (%d attempts: the ensemble lost its quorum)", f.populateAttempts)
			}
			return sec(f.populate) + again, f.populate.Seconds()
		}},
		{"resident memory, largest member", func(f *figures) (string, float64) { return mib(f.rss), float64(f.rss) }},
		{"of which anonymous", func(f *figures) (string, float64) { return mib(f.anon), float64(f.anon) }},
		{"snapshot time (mntr snapshottime, slowest member's)", func(f *figures) (string, float64) {
			return fmt.Sprintf("%.0f ms", f.snapMs), f.snapMs
		}},
		{"snapshot size on disk (newest)", func(f *figures) (string, float64) { return mib(f.snapSize), float64(f.snapSize) }},
		{"getChildren of the widest directory, median of 20", func(f *figures) (string, float64) { return ms(f.childrenMedian), float64(f.childrenMedian) }},
		{"getChildren of the widest directory, slowest of 20", func(f *figures) (string, float64) { return ms(f.childrenMax), float64(f.childrenMax) }},
		{"new follower (empty data directory) caught up", func(f *figures) (string, float64) {
			how := " (by log replay)"
			if f.installed {
				how = ""
			}
			return sec(f.catchUp) + how, f.catchUp.Seconds()
		}},
		{"restart of every member (kill -9) to serving the whole tree", func(f *figures) (string, float64) { return sec(f.restart), f.restart.Seconds() }},
		{"writer's longest stall: populate", func(f *figures) (string, float64) { return ms(f.populateStall), float64(f.populateStall) }},
		{"writer's longest stall: steady, no snapshot", func(f *figures) (string, float64) { return ms(f.steadyStall), float64(f.steadyStall) }},
		{"writer's longest stall: snapshot on every member", func(f *figures) (string, float64) { return ms(f.snapStall), float64(f.snapStall) }},
		{"writer's longest stall: follower catch-up", func(f *figures) (string, float64) { return ms(f.catchUpStall), float64(f.catchUpStall) }},
	}
	if zkF != nil && krF != nil {
		fmt.Fprintf(&b, "| at %d znodes | ZooKeeper 3.8 | zkraft | zkraft/ZooKeeper |\n|---|---|---|---|\n", compare)
		for _, r := range rows {
			zs, zv := r.val(zkF)
			ks, kv := r.val(krF)
			ratio := "-"
			if zv > 0 {
				ratio = fmt.Sprintf("%.2fx", kv/zv)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", r.what, zs, ks, ratio)
		}
		b.WriteString("\n")
	}
	if bigF != nil {
		rows = append(rows,
			rowDef{"`zkraft snapshot save` (file size)", func(f *figures) (string, float64) {
				return fmt.Sprintf("%s (%s)", sec(f.save), mib(f.saveSize)), 0
			}},
			rowDef{"writer's longest stall: snapshot save", func(f *figures) (string, float64) {
				if f.saveStall < 0 {
					return "not measured (saved from a lone member)", 0
				}
				return ms(f.saveStall), 0
			}},
			rowDef{"`zkraft snapshot inspect`", func(f *figures) (string, float64) { return sec(f.inspect), 0 }},
			rowDef{"`zkraft snapshot restore` (data directory size)", func(f *figures) (string, float64) {
				return fmt.Sprintf("%s (%s)", sec(f.restore), mib(f.restoreSize)), 0
			}})
		fmt.Fprintf(&b, "| zkraft at %d znodes | |\n|---|---|\n", nodes)
		for _, r := range rows {
			s, _ := r.val(bigF)
			fmt.Fprintf(&b, "| %s | %s |\n", r.what, s)
		}
	}
	return b.String()
}

// lastLoad is the load average at the end of the last run measured.
func lastLoad(fs ...*figures) float64 {
	var l float64
	for _, f := range fs {
		if f != nil {
			l = f.loadAvgAtFinish
		}
	}
	return l
}
