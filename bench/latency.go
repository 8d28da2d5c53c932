package bench

import "time"

// LatencySecond is one whole second of a measurement for one operation
// class: the median and 99th percentile latency of the requests of that
// class answered in it (0 for a second without any).
type LatencySecond struct {
	P50Ms float64 `json:"p50_ms"`
	P99Ms float64 `json:"p99_ms"`
}

// Quantile is one point of a latency distribution: the latency Ms that a
// fraction Q of the requests did not exceed.
type Quantile struct {
	Q  float64 `json:"q"`
	Ms float64 `json:"ms"`
}

// spectrum lists the quantiles OpStats.Quantiles reports, up to the
// maximum: enough points for a latency-by-percentile plot.
var spectrum = []float64{0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.98, 0.99, 0.995, 0.999, 0.9995, 0.9999, 1}

// Quantiles returns s's latency at each quantile of the spectrum (none for
// an empty snapshot).
func (s *HistSnapshot) Quantiles() []Quantile {
	if s.Total == 0 {
		return nil
	}
	qs := make([]Quantile, len(spectrum))
	for i, q := range spectrum {
		qs[i] = Quantile{Q: q, Ms: ms(float64(s.Quantile(q)))}
	}
	return qs
}

// Second returns the median and 99th percentile of the samples in s (one
// second's, for a timeline).
func (s *HistSnapshot) Second() LatencySecond {
	return LatencySecond{P50Ms: ms(float64(s.Quantile(0.5))), P99Ms: ms(float64(s.Quantile(0.99)))}
}

// Summarize makes the row of op class op from the samples in s, measured
// over d: what `zkraft bench` reports for each of its classes, for load
// generators outside it (the Java and go-zookeeper clients of
// scripts/benchcompare) that record into the same histograms.
func Summarize(op string, s *HistSnapshot, d time.Duration) OpStats {
	row := OpStats{
		Op: op, Ops: s.Total, MeanMs: ms(s.Mean()),
		P50Ms: ms(float64(s.Quantile(0.50))), P99Ms: ms(float64(s.Quantile(0.99))),
		P999Ms: ms(float64(s.Quantile(0.999))), MaxMs: ms(float64(s.Max)), Quantiles: s.Quantiles(),
	}
	if d > 0 {
		row.OpsPerSec = float64(s.Total) / d.Seconds()
	}
	return row
}

// ProcessCPU is the CPU time (user + system) this process has used so
// far, or 0 where it cannot be read: a load generator running inside
// another program reports its ClientCPUSeconds with it.
func ProcessCPU() time.Duration { return processCPU() }
