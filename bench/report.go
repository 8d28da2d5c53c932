package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// Result is a finished run: one row per measured operation class.
type Result struct {
	Workload  string    `json:"workload"`
	Servers   []string  `json:"servers"`
	Sessions  int       `json:"sessions"`
	Inflight  int       `json:"inflight"`
	ValueSize int       `json:"value_size"`
	Keys      int       `json:"keys,omitempty"`       // read, write, mixed
	ReadRatio float64   `json:"read_ratio,omitempty"` // mixed
	Watchers  int       `json:"watchers,omitempty"`   // watch-fanout
	Nodes     int       `json:"nodes,omitempty"`      // populate
	Ephemeral int       `json:"ephemerals,omitempty"` // ephemeral-churn: per session
	Warmup    float64   `json:"warmup_seconds"`
	Seconds   float64   `json:"seconds"` // measured time
	Ops       []OpStats `json:"ops"`
	// PerSecond is successful ops (all classes) in each whole second of the
	// measurement; LongestStallMs the longest time without any reply.
	PerSecond      []uint64 `json:"per_second,omitempty"`
	LongestStallMs float64  `json:"longest_stall_ms"`
	// ClientCPUSeconds is the CPU time (user + system) this load generator
	// used during the measurement, all its goroutines together (0 if not
	// measured). Against Seconds it says how much of the machine the client
	// took: on a machine it shares with the servers, a client that needs a
	// whole core is part of what is measured.
	ClientCPUSeconds float64          `json:"client_cpu_seconds"`
	Errors           map[string]int64 `json:"errors"` // all classes, by code
	Notes            []string         `json:"notes,omitempty"`
	Problems         []string         `json:"problems,omitempty"` // server misbehaviour the workload detected
}

// OpStats is one operation class's throughput and latency.
type OpStats struct {
	Op        string           `json:"op"`
	Ops       uint64           `json:"ops"` // successful
	OpsPerSec float64          `json:"ops_per_sec"`
	MeanMs    float64          `json:"mean_ms"`
	P50Ms     float64          `json:"p50_ms"`
	P99Ms     float64          `json:"p99_ms"`
	P999Ms    float64          `json:"p999_ms"`
	MaxMs     float64          `json:"max_ms"`
	Errors    map[string]int64 `json:"errors,omitempty"`
	// Quantiles is the latency distribution at a spectrum of quantiles up
	// to the maximum, and PerSecond the median and p99 of each whole
	// second of the measurement: what a latency-by-percentile and a
	// latency-over-time plot are drawn from (scripts/benchcompare).
	Quantiles []Quantile      `json:"quantiles,omitempty"`
	PerSecond []LatencySecond `json:"per_second,omitempty"`
}

// TotalOps sums the successful ops of every class.
func (r *Result) TotalOps() uint64 {
	var n uint64
	for _, o := range r.Ops {
		n += o.Ops
	}
	return n
}

// TotalErrors sums every error of the run.
func (r *Result) TotalErrors() int64 {
	var n int64
	for _, v := range r.Errors {
		n += v
	}
	return n
}

// ms converts nanoseconds to milliseconds.
func ms(ns float64) float64 { return ns / 1e6 }

// result merges the recorders into a Result for a window of length d.
func (r *run) result(d time.Duration) *Result {
	cfg := r.cfg
	res := &Result{
		Workload: cfg.Workload, Servers: cfg.Servers, Sessions: cfg.Sessions,
		Inflight: cfg.Inflight, ValueSize: cfg.ValueSize, Seconds: d.Seconds(),
		Warmup: cfg.Warmup.Seconds(), Errors: map[string]int64{},
	}
	switch cfg.Workload {
	case "read", "write":
		res.Keys = cfg.Keys
	case "mixed":
		res.Keys, res.ReadRatio = cfg.Keys, cfg.ReadRatio
	case "watch-fanout":
		res.Watchers, res.Sessions = cfg.Watchers, cfg.Watchers+1 // the watchers and one writer
	case "populate":
		res.Nodes, res.Warmup = cfg.Nodes, 0
	case "ephemeral-churn":
		res.Ephemeral = cfg.Ephemerals
	}
	var snaps [numClasses]HistSnapshot
	errs := make([]map[string]int64, numClasses)
	for _, rec := range r.recorders() {
		for c := range numClasses {
			rec.snapshot(c, &snaps[c])
		}
		rec.mu.Lock()
		for k, n := range rec.errs {
			name := k.what
			if name == "" {
				name = codeName(k.code)
			}
			if errs[k.class] == nil {
				errs[k.class] = map[string]int64{}
			}
			errs[k.class][name] += n
			res.Errors[name] += n
		}
		rec.mu.Unlock()
	}
	for c := classNone + 1; c < numClasses; c++ {
		s := &snaps[c]
		if s.Total == 0 && errs[c] == nil {
			continue
		}
		row := Summarize(c.String(), s, d)
		row.Errors = errs[c]
		res.Ops = append(res.Ops, row)
	}
	return res
}

// WriteJSON prints res as one JSON object.
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	return nil
}

// WriteTable prints res as a human-readable table.
func (r *Result) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "workload %s on %s: %d sessions, inflight %d, value %d B, measured %.2fs after %.2fs warm-up\n",
		r.Workload, strings.Join(r.Servers, ","), r.Sessions, r.Inflight, r.ValueSize, r.Seconds, r.Warmup)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op\tops\tops/s\tmean ms\tp50 ms\tp99 ms\tp99.9 ms\tmax ms\terrors\t")
	for _, o := range r.Ops {
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%s\t\n",
			o.Op, o.Ops, o.OpsPerSec, o.MeanMs, o.P50Ms, o.P99Ms, o.P999Ms, o.MaxMs, formatErrors(o.Errors))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	if len(r.PerSecond) > 0 {
		lo, hi := r.PerSecond[0], r.PerSecond[0]
		for _, n := range r.PerSecond {
			lo, hi = min(lo, n), max(hi, n)
		}
		fmt.Fprintf(w, "per second: min %d, max %d ops; longest time without a reply %.0f ms\n", lo, hi, r.LongestStallMs)
	}
	if r.ClientCPUSeconds > 0 && r.Seconds > 0 {
		line := fmt.Sprintf("client CPU: %.2fs in %.2fs measured (%.0f%% of one core)", r.ClientCPUSeconds, r.Seconds, 100*r.ClientCPUSeconds/r.Seconds)
		if ops := r.TotalOps(); ops > 0 {
			line += fmt.Sprintf(", %.1f µs per op", r.ClientCPUSeconds*1e6/float64(ops))
		}
		fmt.Fprintln(w, line)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "PROBLEM: %s\n", p)
	}
	return nil
}

// formatErrors renders an error table cell, "0" when empty.
func formatErrors(m map[string]int64) string {
	if len(m) == 0 {
		return "0"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s×%d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
