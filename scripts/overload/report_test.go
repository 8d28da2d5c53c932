package main

import (
	"strings"
	"testing"

	"github.com/zkraft/zkraft/bench"
)

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		f    figure
		want string
	}{
		{figure{unit: "count", value: 48000}, "48,000"},
		{figure{unit: "count", value: 0}, "0"},
		{figure{unit: "ops/s", value: 1234567.4}, "1,234,567 ops/s"},
		{figure{unit: "s", value: 2.345}, "2.35 s"},
		{figure{unit: "s", value: 0.0123}, "12.3 ms"},
		{figure{unit: "s", value: -1}, "never"},
		{figure{unit: "ms", value: 689.4}, "689 ms"},
		{figure{unit: "ms", value: 1379.4}, "1,379 ms"},
		{figure{unit: "ms", value: 5.4321}, "5.43 ms"},
		{figure{unit: "s", value: 123.4}, "123 s"},
		{figure{unit: "ms", value: 12600}, "12.6 s"},
		{figure{unit: "KiB", value: 3.42}, "3.4 KiB"},
		{figure{unit: "x", value: 0.5}, "0.50x"},
	} {
		if got := tc.f.format(tc.f.value); got != tc.want {
			t.Errorf("%v %s: %q, want %q", tc.f.value, tc.f.unit, got, tc.want)
		}
	}
}

// TestRatio: a ratio only for figures with a direction, and never over
// a zero or a missing reference.
func TestRatio(t *testing.T) {
	ref, kr := figure{value: 1379, lowerBetter: true}, figure{value: 689, lowerBetter: true}
	if got := ratio(ref, kr, true); got != "**0.50x** (lower is better)" {
		t.Errorf("ratio %q", got)
	}
	if got := ratio(figure{value: 0}, kr, true); got != "" {
		t.Errorf("ratio over zero %q", got)
	}
	if got := ratio(ref, figure{value: 3, unit: "count"}, true); got != "" {
		t.Errorf("ratio of counts %q", got)
	}
	if got := ratio(ref, kr, false); got != "" {
		t.Errorf("ratio without a reference %q", got)
	}
}

// TestRSSFigures: the peak is over the overload's seconds only, and the
// growth is how much higher a member went in the second half than in
// the first.
func TestRSSFigures(t *testing.T) {
	mb := int64(1 << 20)
	res := &bench.OverloadResult{LoadSeconds: 4, Seconds: []bench.OverloadSecond{
		{RSS: []int64{100 * mb, 50 * mb}}, {RSS: []int64{120 * mb, 60 * mb}}, {RSS: []int64{110 * mb, 70 * mb}},
		{RSS: []int64{115 * mb, 90 * mb}}, {RSS: []int64{500 * mb, 500 * mb}}, // recovery: not counted
	}}
	peak, growth := rssFigures(res)
	if peak != 120 || growth != 30 {
		t.Fatalf("peak %v MiB, growth %v MiB; want 120 and 30", peak, growth)
	}
}

// TestMarkdownPairsTheServers: one row per zkraft figure with the
// reference's beside it, the machine's load per run, and notes.
func TestMarkdownPairsTheServers(t *testing.T) {
	o := &options{refName: "zookeeper", refTag: "ZooKeeper 3.8", perWorker: 15000}
	r := &report{opts: o, nofile: 20000}
	r.add(classRuns{class: "herd", n: 10000, runs: []run{
		{server: "zookeeper", load: 1.5, figs: figures{{key: "reread", name: "write → last re-read", value: 1379, unit: "ms", lowerBetter: true}}},
		{server: "zkraft", load: 1.25, figs: figures{{key: "reread", name: "write → last re-read", value: 689, unit: "ms", lowerBetter: true},
			{key: "lost", name: "sessions lost", value: 2, unit: "count", note: "EOF"}}},
	}})
	md := r.markdown()
	for _, want := range []string{
		"| herd, 10,000 watchers | write → last re-read | 1,379 ms | 689 ms | **0.50x** (lower is better) |",
		"| herd, 10,000 watchers | sessions lost | – | 2 |  |",
		"| herd, 10,000 watchers | zkraft | 1.25 | 0% |",
		"- herd, 10,000 watchers, zkraft, sessions lost: EOF",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("no %q in\n%s", want, md)
		}
	}
}
