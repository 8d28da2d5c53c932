package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/zkraft/zkraft/bench"
	"github.com/zkraft/zkraft/internal/testing/benchplot"
)

// plotOps names the row each workload's plots show: the operation its
// latency is about (mixed's setData: the reads are below a millisecond on
// both servers, the writes are where they differ).
var plotOps = map[string]string{
	"read": "getData", "write": "setData", "create-delete": "create", "mixed": "setData",
	"ephemeral-churn": "session-cycle", "watch-fanout": "fanout-round",
}

// plotOp returns the row of ops the plots of workload show: plotOps's,
// or the first (the Java and go-zookeeper clients report one row).
func plotOp(workload string, ops []bench.OpStats) *bench.OpStats {
	for i := range ops {
		if ops[i].Op == plotOps[workload] {
			return &ops[i]
		}
	}
	if len(ops) > 0 {
		return &ops[0]
	}
	return nil
}

// representative returns the run with the median p99 of runs (the later
// of the two middle ones for an even count): the run a plot shows.
func representative(runs []result) result {
	if len(runs) == 0 {
		return result{}
	}
	idx := make([]int, len(runs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return runs[idx[a]].p99 < runs[idx[b]].p99 })
	return runs[idx[len(idx)/2]]
}

// Colours: ZooKeeper (or the baseline) orange, zkraft blue.
const refColor, zkraftColor = "#e6550d", "#3182bd"

// latencyFigure is one row's plots, the reference server's and zkraft's
// side by side: p50 and p99 in each second of the measurement, and the
// latency by percentile up to the maximum.
func latencyFigure(title, refLabel string, ref, kr *bench.OpStats) benchplot.Figure {
	timeline := benchplot.Panel{Title: "latency over time (each second of the measurement)", XLabel: "second", YLabel: "ms (log scale)", LogY: true}
	percentiles := benchplot.Panel{Title: "latency by percentile", XLabel: "percentile", YLabel: "ms (log scale)", LogY: true,
		XTicks: benchplot.PercentileTicks()}
	for _, side := range []struct {
		name, color string
		o           *bench.OpStats
	}{{refLabel, refColor, ref}, {"zkraft", zkraftColor, kr}} {
		if side.o == nil {
			continue
		}
		var xs, p50, p99 []float64
		for i, s := range side.o.PerSecond {
			xs, p50, p99 = append(xs, float64(i+1)), append(p50, s.P50Ms), append(p99, s.P99Ms)
		}
		timeline.Series = append(timeline.Series,
			benchplot.Series{Name: side.name + " p99", Color: side.color, X: xs, Y: p99},
			benchplot.Series{Name: side.name + " p50", Color: side.color, Dashed: true, X: xs, Y: p50})
		var qx, qy []float64
		for _, q := range side.o.Quantiles {
			qx, qy = append(qx, benchplot.PercentileX(q.Q)), append(qy, q.Ms)
		}
		percentiles.Series = append(percentiles.Series, benchplot.Series{Name: side.name, Color: side.color, X: qx, Y: qy})
	}
	return benchplot.Figure{Title: title, Panels: []benchplot.Panel{timeline, percentiles}}
}

// plotSet writes figures as SVG files into dir and keeps a Markdown link
// to each, relative to the directory of the report that lists them.
type plotSet struct {
	dir, rel string // rel: dir as the report links it
	links    []string
}

// newPlotSet prepares dir (created; its old .svg files removed, so a
// workload no longer run leaves no stale plot); report is the Markdown
// file that will link the plots.
func newPlotSet(report, dir string) (*plotSet, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	old, _ := filepath.Glob(filepath.Join(dir, "*.svg"))
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return nil, fmt.Errorf("plots: %w", err)
		}
	}
	rel, err := filepath.Rel(filepath.Dir(report), dir)
	if err != nil {
		rel = dir
	}
	return &plotSet{dir: dir, rel: filepath.ToSlash(rel)}, nil
}

// add writes fig as name.svg and links it under label. A nil set does
// nothing (plots off).
func (p *plotSet) add(name, label string, fig benchplot.Figure) error {
	if p == nil {
		return nil
	}
	f, err := os.Create(filepath.Join(p.dir, name+".svg"))
	if err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	if err := fig.WriteSVG(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	p.links = append(p.links, fmt.Sprintf("[%s](%s/%s.svg)", label, p.rel, name))
	return nil
}

// markdown is the report's section linking every plot.
func (p *plotSet) markdown() string {
	if p == nil || len(p.links) == 0 {
		return ""
	}
	return "\nLatency plots (per second and by percentile, each server's run with the median p99; in " + p.rel + "/): " +
		strings.Join(p.links, " · ") + "\n"
}

// fileName makes a plot's file name of a label ("write (setData)" →
// "write-setdata").
func fileName(label string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(label) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		} else {
			dash = true
		}
	}
	return b.String()
}
