package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/zkraft/zkraft/bench"
	"github.com/zkraft/zkraft/internal/testing/benchcluster"
	"github.com/zkraft/zkraft/internal/testing/benchfloor"
	"github.com/zkraft/zkraft/internal/testing/javabench"
	"github.com/zkraft/zkraft/internal/testing/zkload"
)

// The rows beside the main table (issue 40): setData through go-zookeeper
// at low concurrency, with the write's floor on this machine, and Apache
// ZooKeeper's own Java client (asynchronous, as Kafka and HBase use it).

// extraSettings are the settings of those rows.
type extraSettings struct {
	dur      time.Duration // measured per run
	reps     int           // runs per row and server, alternating
	settle   time.Duration // idle before each run
	refLabel string
}

// lowConc is one low-concurrency row: conns connections with perConn
// requests in flight on each (one goroutine each).
type lowConc struct{ conns, perConn int }

func (l lowConc) inflight() int { return l.conns * l.perConn }

func (l lowConc) label() string {
	c := "connections"
	if l.conns == 1 {
		c = "connection"
	}
	return fmt.Sprintf("%d in flight (%d %s)", l.inflight(), l.conns, c)
}

// parseLowConc reads -lowconc: comma-separated CONNSxPERCONN, e.g.
// "1x1,4x1,12x8"; "" is none.
func parseLowConc(s string) ([]lowConc, error) {
	var out []lowConc
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		a, b, ok := strings.Cut(f, "x")
		conns, err1 := strconv.Atoi(a)
		per, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil || conns < 1 || per < 1 {
			return nil, fmt.Errorf("-lowconc %q: want CONNSxPERCONN (e.g. 4x1), positive", f)
		}
		out = append(out, lowConc{conns, per})
	}
	return out, nil
}

// leaderFirst returns addrs rotated so that leader's comes first: one
// connection then goes to the leader, whose path (its own fsync while a
// follower's ack comes back) is what the floor measures; more go round
// the members.
func leaderFirst(addrs []string, leader string) []string {
	for i, a := range addrs {
		if a == leader {
			return append(append([]string(nil), addrs[i:]...), addrs[:i]...)
		}
	}
	return addrs
}

// fromResult is a load generator's run as a result row: throughput of
// every row, p50 of the plotted row, the worst p99.
func fromResult(workload string, res *bench.Result) result {
	var r result
	for _, o := range res.Ops {
		r.opsPerSec += o.OpsPerSec
		r.p99 = max(r.p99, o.P99Ms)
	}
	if o := plotOp(workload, res.Ops); o != nil {
		r.p50 = o.P50Ms
	}
	r.errors = res.TotalErrors()
	r.ops = res.Ops
	if n := res.TotalOps(); n > 0 {
		r.clientPerOp = time.Duration(res.ClientCPUSeconds * float64(time.Second) / float64(n))
	}
	return r
}

// sideRow is a row measured on both servers.
type sideRow struct {
	label    string
	ref, kr  []result // every run
	refM, kM result   // medians
}

// ratio formats b/a as a table's ratio cell.
func ratio(a, b float64) string {
	if a == 0 {
		return "-"
	}
	return fmt.Sprintf("**%.2fx**", b/a)
}

// sideTable renders rows as Markdown: throughput, p50 and p99 of each
// server with zkraft's ratio to the reference; with floor > 0, zkraft's
// p50 against the floor too. Every run follows.
func sideTable(refLabel string, rows []sideRow, floor benchfloor.Floor) string {
	var b strings.Builder
	ref := strings.TrimSuffix(refLabel, " 3.8")
	fmt.Fprintf(&b, "| row | %s ops/s | zkraft ops/s | zkraft / %s | %s p50 | zkraft p50 | ratio | %s p99 | zkraft p99 | ratio |", refLabel, ref, ref, ref)
	sep := "|---|---|---|---|---|---|---|---|---|---|"
	if floor.Total() > 0 {
		b.WriteString(" zkraft p50 / floor | zkraft p50 / shared-disk floor |")
		sep += "---|---|"
	}
	b.WriteString("\n" + sep + "\n")
	for _, r := range rows {
		z, k := r.refM, r.kM
		fmt.Fprintf(&b, "| %s | %.4g | %.4g | %s | %.3g ms | %.3g ms | %s | %.3g ms | %.3g ms | %s |",
			r.label, z.opsPerSec, k.opsPerSec, ratio(z.opsPerSec, k.opsPerSec), z.p50, k.p50, ratio(z.p50, k.p50), z.p99, k.p99, ratio(z.p99, k.p99))
		if floor.Total() > 0 {
			fmt.Fprintf(&b, " %.2fx | %.2fx |", k.p50/benchfloor.Ms(floor.Total()), k.p50/benchfloor.Ms(floor.SharedTotal()))
		}
		b.WriteString("\n")
	}
	b.WriteString("\nEvery run (ops/s / p50 ms / p99 ms / errors / the client's own CPU µs per op):\n\n| row | server | runs |\n|---|---|---|\n")
	for _, r := range rows {
		for _, side := range []struct {
			name string
			runs []result
		}{{ref, r.ref}, {"zkraft", r.kr}} {
			parts := make([]string, len(side.runs))
			for i, x := range side.runs {
				parts[i] = fmt.Sprintf("%.4g / %.3g / %.3g / %d / %.3g", x.opsPerSec, x.p50, x.p99, x.errors, float64(x.clientPerOp.Nanoseconds())/1e3)
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", r.label, side.name, strings.Join(parts, " · "))
		}
	}
	return b.String()
}

// measureSide runs one row reps times per server, alternating, and
// returns it with the medians; run measures one server once.
func measureSide(both []*benchcluster.Ensemble, ref string, s extraSettings, label string, run func(e *benchcluster.Ensemble) (result, error)) (sideRow, error) {
	runs := map[string][]result{}
	for rep := 0; rep < max(s.reps, 1); rep++ {
		for _, e := range turn(both, rep) {
			time.Sleep(s.settle)
			r, err := run(e)
			if err != nil {
				return sideRow{}, err
			}
			runs[e.Name] = append(runs[e.Name], r)
			fmt.Printf("%-34s %-9s %10.0f ops/s  p50 %7.3f ms  p99 %7.3f ms  errors %d  client cpu/op %v\n", label, e.Name, r.opsPerSec, r.p50, r.p99, r.errors, r.clientPerOp)
		}
	}
	return sideRow{label: label, ref: runs[ref], kr: runs["zkraft"], refM: median(runs[ref]), kM: median(runs["zkraft"])}, nil
}

// plotRow adds a row's figure: each server's run with the median p99.
func plotRow(plots *plotSet, name, title, workload string, s extraSettings, r sideRow) error {
	zr, kr := representative(r.ref), representative(r.kr)
	return plots.add(fileName(name), title, latencyFigure(title, s.refLabel, plotOp(workload, zr.ops), plotOp(workload, kr.ops)))
}

// lowConcSection measures the floor in zkraft's first member's directory
// (where it logs) and the setData rows through go-zookeeper, and returns
// the report's section.
func lowConcSection(both []*benchcluster.Ensemble, ref string, s extraSettings, specs []lowConc, plots *plotSet) (string, error) {
	kr := both[1]
	time.Sleep(s.settle)
	floor, err := benchfloor.Measure(kr.Members[0].Dir, 500)
	if err != nil {
		return "", err
	}
	fmt.Println(floor)
	var rows []sideRow
	for _, l := range specs {
		label := "setData, " + l.label()
		r, err := measureSide(both, ref, s, label, func(e *benchcluster.Ensemble) (result, error) {
			addrs := e.Addrs()
			if m := e.Leader(); m != nil {
				addrs = leaderFirst(addrs, m.ClientAddr)
			}
			res, err := zkload.Run(context.Background(), zkload.Config{Servers: addrs, Conns: l.conns, PerConn: l.perConn,
				Warmup: time.Second, Duration: s.dur, Root: "/benchcompare-lowconc", ValueSize: 100})
			if err != nil {
				return result{}, fmt.Errorf("%s %s: %w", e.Name, label, err)
			}
			return fromResult("write", res), nil
		})
		if err != nil {
			return "", err
		}
		rows = append(rows, r)
		if err := plotRow(plots, fmt.Sprintf("lowconc-%d-in-flight", l.inflight()), "setData through go-zookeeper, "+l.label(), "write", s, r); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("\n### setData at low concurrency (go-zookeeper client)\n\n"+
		"go-zookeeper/zk, the client Go applications use: each goroutine waits for its reply (one request in flight), "+
		"a znode of its own each, 100-byte values; the first connection goes to the leader, the others round the members. "+
		"%v per run after 1 s of warm-up, the median of %s per server, alternating. "+
		"The floor of one write on this machine, measured with both ensembles idle: fsync of a %d-byte append in zkraft's first member's "+
		"data directory p50 %.3f ms (p99 %.3f ms) + a loopback TCP round trip p50 %.3f ms (p99 %.3f ms) = **%.3f ms**. "+
		"Both ensembles' members share that disk, so a write's fsyncs queue on it: %d members appending and fsyncing at once "+
		"until a majority is durable took p50 %.3f ms (p99 %.3f ms), so the shared-disk floor is **%.3f ms**.\n\n%s",
		s.dur, nRuns(max(s.reps, 1)), benchfloor.RecordSize, benchfloor.Ms(floor.FsyncP50), benchfloor.Ms(floor.FsyncP99),
		benchfloor.Ms(floor.RTTP50), benchfloor.Ms(floor.RTTP99), benchfloor.Ms(floor.Total()),
		benchfloor.Members, benchfloor.Ms(floor.QuorumP50), benchfloor.Ms(floor.QuorumP99), benchfloor.Ms(floor.SharedTotal()),
		sideTable(s.refLabel, rows, floor)), nil
}

// javaWorkloads labels the workloads the Java client runs.
var javaWorkloads = map[string]string{"read": "read (getData)", "write": "write (setData)", "create-delete": "create/delete", "mixed": "mixed 90/10"}

// javaSection compiles JavaBench into dir and runs workloads through it
// with sessions x inflight, and returns the report's section.
func javaSection(both []*benchcluster.Ensemble, ref string, s extraSettings, dir string, workloads []string, sessions, inflight int, plots *plotSet) (string, error) {
	if err := javabench.Missing(); err != nil {
		fmt.Println("no Java client rows:", err)
		return fmt.Sprintf("\n(No rows of Apache ZooKeeper's Java client: %v.)\n", err), nil
	}
	cp, err := javabench.Compile(context.Background(), dir)
	if err != nil {
		return "", err
	}
	var rows []sideRow
	for _, w := range workloads {
		label := javaWorkloads[w] + ", Java client"
		r, err := measureSide(both, ref, s, label, func(e *benchcluster.Ensemble) (result, error) {
			res, err := javabench.Run(context.Background(), cp, javabench.Config{Servers: e.Addrs(), Workload: w,
				Sessions: sessions, Inflight: inflight, Warmup: 2 * time.Second, Duration: s.dur,
				Root: "/benchcompare-java", Keys: 1000, ValueSize: 100, ReadRatio: 0.9})
			if err != nil {
				return result{}, fmt.Errorf("%s: %w", e.Name, err)
			}
			return fromResult(w, res), nil
		})
		if err != nil {
			return "", err
		}
		rows = append(rows, r)
		if err := plotRow(plots, "java-"+w, javaWorkloads[w]+" through the Java client (async)", w, s, r); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("\n### Apache ZooKeeper's Java client (asynchronous, as Kafka and HBase use it)\n\n"+
		"Debian's zookeeper.jar, compiled against in the run: %d sessions × %d requests in flight, each session connected "+
		"where the client's own choice among the members puts it, 1000 keys of 100 bytes, create/delete's creates and deletes "+
		"both counted; %v per run after 2 s of warm-up, the median of %s per server, alternating.\n\n%s",
		sessions, inflight, s.dur, nRuns(max(s.reps, 1)), sideTable(s.refLabel, rows, benchfloor.Floor{})), nil
}

// splitList splits a comma-separated flag, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
