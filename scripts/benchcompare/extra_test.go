package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/bench"
	"github.com/zkraft/zkraft/internal/testing/benchfloor"
)

func TestParseLowConc(t *testing.T) {
	got, err := parseLowConc("1x1, 4x1,12x8,")
	if err != nil {
		t.Fatal(err)
	}
	if want := []lowConc{{1, 1}, {4, 1}, {12, 8}}; !slices.Equal(got, want) {
		t.Fatalf("parsed %v, want %v", got, want)
	}
	if got[2].inflight() != 96 || got[2].label() != "96 in flight (12 connections)" || got[0].label() != "1 in flight (1 connection)" {
		t.Fatalf("labels %q, %q", got[2].label(), got[0].label())
	}
	if none, err := parseLowConc(""); err != nil || len(none) != 0 {
		t.Fatalf("empty: %v, %v", none, err)
	}
	for _, bad := range []string{"4", "0x1", "1x0", "ax1", "1x1x1"} {
		if _, err := parseLowConc(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestLeaderFirst(t *testing.T) {
	addrs := []string{"a", "b", "c"}
	if got := leaderFirst(addrs, "b"); !slices.Equal(got, []string{"b", "c", "a"}) {
		t.Fatalf("leader b: %v", got)
	}
	if got := leaderFirst(addrs, "x"); !slices.Equal(got, addrs) {
		t.Fatalf("no leader: %v", got)
	}
	if addrs[0] != "a" {
		t.Fatal("leaderFirst changed its argument")
	}
}

// TestRepresentativeIsTheMedianP99Run: a plot shows a typical run, not
// the best or the worst.
func TestRepresentativeIsTheMedianP99Run(t *testing.T) {
	runs := []result{{p99: 9, opsPerSec: 1}, {p99: 1, opsPerSec: 2}, {p99: 5, opsPerSec: 3}}
	if got := representative(runs); got.opsPerSec != 3 {
		t.Fatalf("representative %+v", got)
	}
	if got := representative(nil); got.ops != nil {
		t.Fatalf("of none: %+v", got)
	}
}

func TestPlotOpPicksTheWorkloadsRow(t *testing.T) {
	ops := []bench.OpStats{{Op: "getData"}, {Op: "setData"}}
	if o := plotOp("mixed", ops); o == nil || o.Op != "setData" {
		t.Fatalf("mixed: %+v", o)
	}
	if o := plotOp("java", []bench.OpStats{{Op: "java-async"}}); o == nil || o.Op != "java-async" {
		t.Fatalf("one row: %+v", o)
	}
	if plotOp("read", nil) != nil {
		t.Fatal("a row of nothing")
	}
}

func TestFileName(t *testing.T) {
	for in, want := range map[string]string{"write (setData)": "write-setdata", "mixed 90/10": "mixed-90-10", "create-delete": "create-delete"} {
		if got := fileName(in); got != want {
			t.Errorf("fileName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSideTable: each row has both servers' throughput, p50 and p99 with
// zkraft's ratios, zkraft's p50 against the floor when there is one, and
// every run listed.
func TestSideTable(t *testing.T) {
	z := result{opsPerSec: 400, p50: 2, p99: 8}
	k := result{opsPerSec: 1000, p50: 0.5, p99: 2, errors: 1, clientPerOp: 12500 * time.Nanosecond}
	rows := []sideRow{{label: "setData, 1 in flight (1 connection)", ref: []result{z}, kr: []result{k}, refM: z, kM: k}}
	md := sideTable("ZooKeeper 3.8", rows, benchfloor.Floor{FsyncP50: 300 * time.Microsecond, RTTP50: 100 * time.Microsecond,
		QuorumP50: 400 * time.Microsecond})
	for _, want := range []string{
		"| row | ZooKeeper 3.8 ops/s | zkraft ops/s | zkraft / ZooKeeper |",
		"| setData, 1 in flight (1 connection) | 400 | 1000 | **2.50x** | 2 ms | 0.5 ms | **0.25x** | 8 ms | 2 ms | **0.25x** | 1.25x | 1.00x |",
		"| setData, 1 in flight (1 connection) | zkraft | 1000 / 0.5 / 2 / 1 / 12.5 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("no %q in:\n%s", want, md)
		}
	}
	if md := sideTable("ZooKeeper 3.8", rows, benchfloor.Floor{}); strings.Contains(md, "floor") {
		t.Errorf("a floor column without a floor:\n%s", md)
	}
}

// TestPlotsAreWrittenAndLinked: a figure goes into the plot directory as
// SVG with both servers' series, old plots are removed, and the report's
// link is relative to the report.
func TestPlotsAreWrittenAndLinked(t *testing.T) {
	dir := t.TempDir()
	report, plotDir := filepath.Join(dir, "bench-latest.md"), filepath.Join(dir, "bench")
	if err := os.MkdirAll(plotDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(plotDir, "stale.svg"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := newPlotSet(report, plotDir)
	if err != nil {
		t.Fatal(err)
	}
	row := &bench.OpStats{PerSecond: []bench.LatencySecond{{P50Ms: 1, P99Ms: 3}, {P50Ms: 1, P99Ms: 4}},
		Quantiles: []bench.Quantile{{Q: 0.5, Ms: 1}, {Q: 1, Ms: 9}}}
	if err := p.add("write", "write (setData)", latencyFigure("write", "ZooKeeper 3.8", row, row)); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(plotDir, "*.svg"))
	if len(files) != 1 || filepath.Base(files[0]) != "write.svg" {
		t.Fatalf("plot files %v", files)
	}
	svg, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"ZooKeeper 3.8 p99", "ZooKeeper 3.8 p50", "zkraft p99", "zkraft p50", `data-series="zkraft"`} {
		if !bytes.Contains(svg, []byte(s)) {
			t.Errorf("no series %q in the plot", s)
		}
	}
	if md := p.markdown(); !strings.Contains(md, "[write (setData)](bench/write.svg)") {
		t.Fatalf("links: %q", md)
	}
	var none *plotSet
	if err := none.add("x", "x", latencyFigure("x", "ZooKeeper", nil, nil)); err != nil || none.markdown() != "" {
		t.Fatal("plots off still plotted")
	}
}

// TestFromResult: a client's run becomes a row with the plotted op's
// p50, the worst p99, every row's throughput and the client's CPU per op.
func TestFromResult(t *testing.T) {
	res := &bench.Result{ClientCPUSeconds: 0.003, Errors: map[string]int64{"-4 connection loss": 2}, Ops: []bench.OpStats{
		{Op: "create", Ops: 100, OpsPerSec: 50, P50Ms: 1, P99Ms: 3},
		{Op: "delete", Ops: 200, OpsPerSec: 100, P50Ms: 2, P99Ms: 7},
	}}
	r := fromResult("create-delete", res)
	if r.opsPerSec != 150 || r.p50 != 1 || r.p99 != 7 || r.errors != 2 || r.clientPerOp != 10*time.Microsecond || len(r.ops) != 2 {
		t.Fatalf("row %+v", r)
	}
}
