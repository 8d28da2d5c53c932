package soak

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The run, from setup to verdict:
//
//  1. Leftovers of earlier runs whose process is gone are removed.
//  2. A FROM scratch image of bin/zkraft (rebuilt by go build if stale) and
//     of holder/ is built, unless the one there already holds them; a private Docker network; five holder
//     containers (each owns a network namespace, an address and a client
//     port published on 127.0.0.1); five member containers joining them,
//     with zoo.cfg's server.N lines by address and each member's data
//     directory bind-mounted from the host, member 5's on the faulty disk.
//  3. Clients: one pinned to each member, three over all of them.
//  4. The nemesis injects faults for the run's duration (see nemesis_test.go),
//     then heals everything; the clients go on for a quiet tail.
//  5. Every member must serve again; each member's tree is read over its
//     own client port after a sync and the five are compared; a last
//     linearizable read of every register is added to its history.
//  6. The checks of check_test.go, the liveness check below, the summary.
//
// ZKRAFT_SOAK_DURATION (default 75s, as in make test) is how long faults
// are injected; ZKRAFT_SOAK_SEED replays a run's choices (the faults' kinds,
// targets and timing, and the clients' operations; not the ensemble's own
// timing); ZKRAFT_SOAK_KEEP=1 keeps the report directory (member logs,
// fault timeline, history, summary) even when the run passes.

// soakConfig is one run's shape, from the environment.
type soakConfig struct {
	duration time.Duration
	seed     int64
	keep     bool
	long     bool
}

func loadConfig(t *testing.T) soakConfig {
	cfg := soakConfig{duration: 75 * time.Second, seed: time.Now().UnixNano() % 1_000_000_000}
	if v := os.Getenv("ZKRAFT_SOAK_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 30*time.Second {
			t.Fatalf("ZKRAFT_SOAK_DURATION=%q: want a duration of at least 30s", v)
		}
		cfg.duration = d
	}
	if v := os.Getenv("ZKRAFT_SOAK_SEED"); v != "" {
		s, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("ZKRAFT_SOAK_SEED=%q: %v", v, err)
		}
		cfg.seed = s
	}
	cfg.keep = os.Getenv("ZKRAFT_SOAK_KEEP") == "1"
	cfg.long = cfg.duration >= 10*time.Minute
	return cfg
}

// Limits of the checks.
const (
	// stallLimit is the longest the ensemble may go without acknowledging
	// a write while a quorum of healthy members can reach each other
	// (election, reconnection and a fresh session included).
	stallLimit = 30 * time.Second
	// quietTail is how long the clients go on once everything healed.
	quietTail = 10 * time.Second
	// inconclusiveShare is the share of registers porcupine may give up on
	// (an undecided history proves nothing either way) before the run fails.
	inconclusiveShare = 0.05
)

func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("the soak runs five containers under faults for minutes")
	}
	requireDocker(t)
	cfg := loadConfig(t)
	began := time.Now()
	t.Logf("soak: seed %d (ZKRAFT_SOAK_SEED=%d replays it), faults for %v", cfg.seed, cfg.seed, cfg.duration)

	report := filepath.Join(os.TempDir(), "zkraft-soak-reports", time.Now().Format("20060102-150405")+"-seed"+strconv.FormatInt(cfg.seed, 10))
	if err := os.MkdirAll(report, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := removeLeftovers(t.Logf); err != nil {
		t.Logf("leftovers of earlier runs (going on): %v", err)
	}

	ccfg := clusterConfig{size: 5, diskID: 5, diskSize: 256 << 20, snapCount: 2000}
	ncfg := nemesisConfig{gapMin: 2 * time.Second, gapMax: 5 * time.Second, durMin: 2 * time.Second, durMax: 8 * time.Second,
		minorityFor: 6 * time.Second}
	genPeriod := 10 * time.Second
	if cfg.long {
		ccfg.diskSize, ccfg.snapCount = 1<<30, 5000
		ncfg = nemesisConfig{gapMin: 2 * time.Second, gapMax: 8 * time.Second, durMin: 2 * time.Second, durMax: 20 * time.Second,
			minorityEvery: 5 * time.Minute, minorityFor: 10 * time.Second}
		genPeriod = 15 * time.Second
	}

	var c *cluster
	var nem *nemesis
	t.Cleanup(func() {
		if c != nil {
			if t.Failed() || cfg.keep {
				if err := c.saveLogs(report); err != nil {
					t.Logf("saving member logs: %v", err)
				}
			}
			if err := c.teardown(); err != nil {
				t.Errorf("teardown: %v", err)
			}
		}
		if nem != nil {
			_ = nem.saveTimeline(report)
		}
		if t.Failed() || cfg.keep {
			t.Logf("report kept in %s", report)
		} else {
			os.RemoveAll(report)
		}
	})
	c, err := startCluster(ccfg, t.Logf)
	if err != nil {
		t.Fatalf("starting the cluster: %v", err)
	}
	// Ctrl-C on a long run ends the process without t.Cleanup: tear down
	// first (the next run would remove the leftovers, but not at once).
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	t.Cleanup(func() { signal.Stop(sigs); close(sigs) })
	go func() {
		if _, ok := <-sigs; ok {
			fmt.Fprintln(os.Stderr, "soak: interrupted; removing its containers, network and mounts")
			if err := c.teardown(); err != nil {
				fmt.Fprintln(os.Stderr, "soak:", err)
			}
			os.Exit(1)
		}
	}()
	t.Logf("5 members up in %v (member %d on the faulty disk); leader: member %d", time.Since(began).Round(time.Second), c.diskID, c.leader().id)

	var all []string
	for _, m := range c.members {
		all = append(all, m.clientAddr)
	}
	maxGen := int64((cfg.duration+quietTail)/genPeriod) + 2
	if err := prepare(all, maxGen); err != nil {
		t.Fatal(err)
	}
	wcfg := workloadConfig{slots: 3, genPeriod: genPeriod, maxGen: maxGen, think: 15 * time.Millisecond,
		opTimeout: 90 * time.Second, seed: cfg.seed}
	for _, m := range c.members {
		wcfg.members = append(wcfg.members, []string{m.clientAddr})
	}
	for i := range 3 {
		wcfg.members = append(wcfg.members, append(all[i+1:len(all):len(all)], all[:i+1]...))
	}
	w, err := startWorkload(wcfg)
	if err != nil {
		t.Fatal(err)
	}
	nem = newNemesis(c, ncfg, cfg.seed, w.start, t.Logf)
	faultStart := time.Now()
	nem.run(time.Now().Add(cfg.duration))
	faultPhase := time.Since(faultStart)
	time.Sleep(quietTail)
	w.halt()
	end := time.Duration(w.now())
	ops := w.history()

	// Convergence: every member serves, and all five trees are the same.
	sum := &summary{cfg: cfg, faultPhase: faultPhase, ops: ops}
	if err := c.waitServing(3 * time.Minute); err != nil {
		t.Errorf("after healing everything: %v", err)
	}
	trees := make([]map[string]znodeState, len(c.members))
	var treeErrs []error
	var mu sync.Mutex
	_ = c.parallel(func(m *member) error {
		tr, err := readTree(m.clientAddr)
		mu.Lock()
		defer mu.Unlock()
		trees[m.id-1] = tr
		if err != nil {
			treeErrs = append(treeErrs, err)
		}
		return nil
	})
	var ids []int
	var read []map[string]znodeState
	for i, tr := range trees {
		if tr != nil {
			ids, read = append(ids, i+1), append(read, tr)
		}
	}
	if len(treeErrs) > 0 || len(read) != len(c.members) {
		t.Errorf("reading the members' trees: %v", treeErrs)
	}
	if len(read) > 0 {
		sum.nodes = len(read[0])
		sum.treeDiffs = compareTrees(ids, read)
	}

	keys := registerKeys(ops)
	finals, err := finalReads(w, all, keys)
	if err != nil {
		t.Errorf("final reads: %v", err)
	}
	sum.regs = checkRegisters(ops, finals, report, time.Minute)
	sum.reads = checkReads(ops)
	if len(read) > 0 {
		sum.seqs = checkSeqCreates(ops, read[0])
	}
	sum.stall, sum.stallAt = longestStall(nem.avail, ops, end)
	sum.nem = nem
	sum.total = time.Since(began)

	text := sum.String()
	for _, line := range strings.Split(text, "\n") {
		t.Log(line)
	}
	_ = os.WriteFile(filepath.Join(report, "summary.txt"), []byte(text), 0o644)
	_ = saveHistory(filepath.Join(report, "history.log"), ops, finals)

	for _, f := range sum.failures() {
		t.Error(f)
	}
}

// registerKeys lists the registers the history touched.
func registerKeys(ops []*op) []string {
	seen := map[string]bool{}
	var keys []string
	for _, o := range ops {
		if o.kind != opSeqCreate && !seen[o.key] {
			seen[o.key] = true
			keys = append(keys, o.key)
		}
	}
	sort.Strings(keys)
	return keys
}

// waitServing waits until every member serves as leader or follower, one
// of them the leader.
func (c *cluster) waitServing(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		modes := make([]string, len(c.members))
		_ = c.parallel(func(m *member) error { modes[m.id-1] = c.mode(m); return nil })
		leaders, serving := 0, 0
		for _, md := range modes {
			if md == "leader" {
				leaders++
			}
			if md == "leader" || md == "follower" {
				serving++
			}
		}
		if leaders == 1 && serving == len(c.members) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("members not all serving after %v: modes %q", timeout, modes)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// longestStall is the longest time without an acknowledged write while a
// quorum was up and no minority window was on, and when it began.
func longestStall(avail []availability, ops []*op, end time.Duration) (worst, at time.Duration) {
	var acks []time.Duration
	for _, o := range ops {
		if o.out == outOK && o.kind != opRead && o.kind != opSyncRead {
			acks = append(acks, time.Duration(o.ret))
		}
	}
	sort.Slice(acks, func(i, j int) bool { return acks[i] < acks[j] })
	for i, a := range avail {
		if !a.quorum || a.minority {
			continue
		}
		to := end
		if i+1 < len(avail) {
			to = avail[i+1].at
		}
		last := a.at
		j := sort.Search(len(acks), func(j int) bool { return acks[j] >= a.at })
		for ; j < len(acks) && acks[j] < to; j++ {
			if acks[j]-last > worst {
				worst, at = acks[j]-last, last
			}
			last = acks[j]
		}
		if to-last > worst {
			worst, at = to-last, last
		}
	}
	return worst, at
}

// saveHistory writes every operation, in each client's order, to path.
func saveHistory(path string, ops, finals []*op) error {
	var b strings.Builder
	for _, o := range append(append([]*op(nil), ops...), finals...) {
		b.WriteString(o.describe())
		b.WriteByte('\n')
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
