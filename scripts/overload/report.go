package main

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/zkraft/zkraft/bench"
)

// figure is one measured figure of a run.
type figure struct {
	key          string // pairs the two servers' figures
	name         string
	value        float64
	unit         string // ms, s, KiB, MiB, ops/s, x, count
	lowerBetter  bool   // a ratio is shown when one of these is set
	higherBetter bool
	note         string
}

// figures are a run's figures, in the order of the report's rows.
type figures []figure

// format renders v in f's unit.
func (f figure) format(v float64) string {
	switch f.unit {
	case "count":
		if v < 0 {
			return "unknown"
		}
		return thousands(int64(v))
	case "ops/s":
		return thousands(int64(math.Round(v))) + " ops/s"
	case "x":
		return fmt.Sprintf("%.2fx", v)
	case "s":
		switch {
		case v < 0:
			return "never"
		case v < 1:
			return figure{unit: "ms"}.format(1000 * v)
		case v >= 100:
			return thousands(int64(math.Round(v))) + " s"
		}
		return fmt.Sprintf("%.3g s", v)
	case "ms":
		switch {
		case v >= 10000:
			return figure{unit: "s"}.format(v / 1000)
		case v >= 100:
			return thousands(int64(math.Round(v))) + " ms"
		}
		return fmt.Sprintf("%.3g ms", v)
	case "cores":
		return fmt.Sprintf("%.2f", v)
	case "KiB", "MiB":
		return fmt.Sprintf("%.1f %s", v, f.unit)
	}
	return fmt.Sprintf("%.3g %s", v, f.unit)
}

// thousands renders n with commas between thousands.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// classRuns is one class at one size on both servers.
type classRuns struct {
	class string
	n     int
	runs  []run
}

// report collects the runs and renders them.
type report struct {
	opts    *options
	started time.Time
	nofile  uint64
	classes []classRuns
}

func (r *report) add(c classRuns) { r.classes = append(r.classes, c) }

// title names a class at its size for the table.
func (c classRuns) title() string {
	switch c.class {
	case "herd":
		return fmt.Sprintf("herd, %s watchers", thousands(int64(c.n)))
	case "storm":
		return fmt.Sprintf("reconnect storm, %s sessions", thousands(int64(c.n)))
	case "table":
		return fmt.Sprintf("connection table, %s idle sessions", thousands(int64(c.n)))
	}
	return c.class
}

// of returns the run on server.
func (c classRuns) of(server string) *run {
	for i := range c.runs {
		if c.runs[i].server == server {
			return &c.runs[i]
		}
	}
	return nil
}

// markdown renders the report for docs/performance.md.
func (r *report) markdown() string {
	o := r.opts
	host, _ := os.Hostname()
	var b strings.Builder
	fmt.Fprintf(&b, "Measured %s on %s (%d CPUs), each class on a fresh three-member ensemble of each server on loopback "+
		"(tickTime 2000, syncLimit 5, fsync on), the two servers in alternation; sessions with a %v timeout, pinging from the "+
		"moment they open and resuming as ZooKeeper's client does, held by `zkraft bench --worker` processes of at most %s "+
		"sessions (the open-file limit is %s per process, for the members too).\n\n",
		r.started.UTC().Format("2006-01-02 15:04 MST"), host, runtime.NumCPU(), o.sessionTimeout, thousands(int64(o.perWorker)), thousands(int64(r.nofile)))
	fmt.Fprintf(&b, "| class | measure | %s | zkraft | zkraft / %s |\n|---|---|---|---|---|\n", o.refTag, strings.TrimSuffix(o.refTag, " 3.8"))
	var notes []string
	for _, c := range r.classes {
		ref, kr := c.of(o.refName), c.of("zkraft")
		if kr == nil {
			continue
		}
		if ref == nil {
			ref = &run{}
		}
		for _, kf := range kr.figs {
			rf, ok := ref.figs.find(kf.key)
			refCell := "–"
			if ok {
				refCell = rf.format(rf.value)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", c.title(), kf.name, refCell, kf.format(kf.value), ratio(rf, kf, ok))
			for _, f := range []struct {
				server string
				fig    figure
			}{{o.refTag, rf}, {"zkraft", kf}} {
				if f.fig.note != "" && (f.fig.unit != "count" || f.fig.value != 0) {
					notes = append(notes, fmt.Sprintf("%s, %s, %s: %s", c.title(), f.server, f.fig.name, f.fig.note))
				}
			}
		}
	}
	b.WriteString("\nThe machine while each ran (one-minute load average at the start, and the share of CPU time the hypervisor " +
		"gave to other guests):\n\n| class | server | load average | steal |\n|---|---|---|---|\n")
	for _, c := range r.classes {
		for _, run := range c.runs {
			name := "zkraft"
			if run.server != "zkraft" {
				name = o.refTag
			}
			fmt.Fprintf(&b, "| %s | %s | %.2f | %.0f%% |\n", c.title(), name, run.load, 100*run.steal)
		}
	}
	if len(notes) > 0 {
		b.WriteString("\nNotes:\n\n")
		for _, n := range notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	b.WriteString(r.timelines())
	return b.String()
}

// find returns the figure with key.
func (fs figures) find(key string) (figure, bool) {
	for _, f := range fs {
		if f.key == key {
			return f, true
		}
	}
	return figure{}, false
}

// ratio renders zkraft's figure over the reference's.
func ratio(ref, kr figure, ok bool) string {
	if !ok || !(kr.lowerBetter || kr.higherBetter) || ref.value <= 0 || kr.value < 0 {
		return ""
	}
	better := "lower is better"
	if kr.higherBetter {
		better = "higher is better"
	}
	return fmt.Sprintf("**%.2fx** (%s)", kr.value/ref.value, better)
}

// timelines renders the overload's seconds, every fifth, for each server.
func (r *report) timelines() string {
	var b strings.Builder
	for _, c := range r.classes {
		for _, run := range c.runs {
			if run.overload != nil {
				b.WriteString(r.timeline(run.server, run.overload))
			}
		}
	}
	return b.String()
}

// timeline renders one server's overload seconds.
func (r *report) timeline(server string, res *bench.OverloadResult) string {
	name := "zkraft"
	if server != "zkraft" {
		name = r.opts.refTag
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nThe overload on %s, second by second (every fifth; from second %d on the load has stopped): "+
		"setData sent and answered, their p50 and p99, the bystander's p99, each member's RSS.\n\n"+
		"| second | sent | answered | p50 | p99 | bystander p99 | RSS MiB |\n|---|---|---|---|---|---|---|\n", name, res.LoadSeconds)
	msf := figure{unit: "ms"}
	for i, s := range res.Seconds {
		if i%5 != 0 && i != res.LoadSeconds-1 && i != res.LoadSeconds && i != len(res.Seconds)-1 {
			continue
		}
		rss := make([]string, len(s.RSS))
		for j, v := range s.RSS {
			rss[j] = fmt.Sprintf("%.0f", mib(v))
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s |\n", i, thousands(s.Sent), thousands(s.Done),
			msf.format(ms(s.P50)), msf.format(ms(s.P99)), msf.format(ms(s.BystanderP99)), strings.Join(rss, " / "))
	}
	return b.String()
}
