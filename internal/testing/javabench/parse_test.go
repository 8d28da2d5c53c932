package javabench

import (
	"strings"
	"testing"
)

// output is what JavaBench prints for a run of two seconds: 100 requests
// of 1 ms and one of 20 ms (the maximum, in the top bucket), a second
// each, and two connection losses.
const output = `READY
SEC 0 1000000:60
SEC 1 1000000:40 20000000:1
ALL 1000000:100 20000000:1
WINDOW 2000000000
CPU 1500000000
ERROR -4 2
DONE
`

func TestParseReadsTheHistograms(t *testing.T) {
	res, err := Parse(strings.NewReader(output))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Ops) != 1 || res.Seconds != 2 {
		t.Fatalf("rows %+v, %v s", res.Ops, res.Seconds)
	}
	row := res.Ops[0]
	if row.Op != "java-async" || row.Ops != 101 || row.OpsPerSec != 50.5 {
		t.Fatalf("row %+v", row)
	}
	// The bucket of 1 ms is 1/64 of its power of two wide; the maximum
	// is exact.
	if row.P50Ms < 0.99 || row.P50Ms > 1.02 || row.MaxMs != 20 || row.P999Ms != 20 {
		t.Fatalf("p50 %v, p99.9 %v, max %v ms", row.P50Ms, row.P999Ms, row.MaxMs)
	}
	if len(row.Quantiles) == 0 || row.Quantiles[len(row.Quantiles)-1].Ms != 20 {
		t.Fatalf("quantiles %+v", row.Quantiles)
	}
	if len(row.PerSecond) != 2 || row.PerSecond[0].P99Ms > 1.02 || row.PerSecond[1].P99Ms != 20 {
		t.Fatalf("per second %+v", row.PerSecond)
	}
	if res.ClientCPUSeconds != 1.5 {
		t.Fatalf("client CPU %v s", res.ClientCPUSeconds)
	}
	if res.Errors["-4 connection loss"] != 2 || row.Errors["-4 connection loss"] != 2 || res.TotalErrors() != 2 {
		t.Fatalf("errors %v", res.Errors)
	}
}

// TestParseRejectsUnfinishedRuns: a JVM that died, never connected or
// printed garbage is an error, not a row of zeros.
func TestParseRejectsUnfinishedRuns(t *testing.T) {
	for name, out := range map[string]string{
		"never ready":  "Exception in thread main\n",
		"no DONE":      strings.TrimSuffix(output, "DONE\n"),
		"no window":    strings.Replace(output, "WINDOW 2000000000\n", "", 1),
		"zero window":  strings.Replace(output, "WINDOW 2000000000", "WINDOW 0", 1),
		"bad bucket":   strings.Replace(output, "ALL 1000000:100", "ALL 1000000=100", 1),
		"bad count":    strings.Replace(output, "SEC 0 1000000:60", "SEC 0 1000000:x", 1),
		"bad error":    strings.Replace(output, "ERROR -4 2", "ERROR -4", 1),
		"bad CPU":      strings.Replace(output, "CPU 1500000000", "CPU x", 1),
		"no histogram": strings.Replace(output, "ALL 1000000:100 20000000:1\n", "", 1),
	} {
		if _, err := Parse(strings.NewReader(out)); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}
