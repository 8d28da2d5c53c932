// Package gctune keeps the Go heap's headroom near a fixed size.
//
// The collector lets the heap grow to (1 + GOGC/100) times the live heap
// before it collects again. With the default GOGC=100 a member holding a
// million znodes (~400 MiB live) would keep up to another 400 MiB of
// garbage resident between collections, while a member with a small tree
// under a write load collects every few megabytes and spends a tenth of
// its CPU doing so. Tune sets GOGC so the garbage allowed between
// collections stays near Headroom: higher than the default while the live
// heap is small (at most MaxPercent), lower as it grows (never below
// MinPercent).
//
// It does nothing when the operator set GOGC or GOMEMLIMIT: their choice
// wins.
package gctune

import (
	"context"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

const (
	// Headroom is the garbage allowed above the live heap.
	Headroom = 128 << 20
	// MaxPercent bounds how far GOGC is raised for a small live heap:
	// from about 5 MiB live the full Headroom applies. (At 400, a member
	// with a small tree under a write load collected eight times a
	// second, each collection with two stop-the-world phases that took
	// 1-8 ms on the test VM a quarter of the time.)
	MaxPercent = 2500
	// MinPercent bounds how far GOGC is lowered (at most 4 collections per
	// live heap's worth of allocation).
	MinPercent = 25
	// interval is how often the live heap is sampled.
	interval = 2 * time.Second
)

// Percent returns the GOGC value for a live heap of live bytes:
// Headroom/live in percent, within [MinPercent, MaxPercent].
func Percent(live uint64) int {
	if live <= Headroom*100/MaxPercent {
		return MaxPercent
	}
	p := int(uint64(Headroom) * 100 / live)
	if p < MinPercent {
		return MinPercent
	}
	return p
}

// Enabled reports whether Run would tune anything: neither GOGC nor
// GOMEMLIMIT is set in the environment.
func Enabled() bool {
	return os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == ""
}

// Run samples the live heap every two seconds and sets GOGC to
// Percent(live) until ctx is done. It returns at once if !Enabled().
func Run(ctx context.Context) {
	if !Enabled() {
		return
	}
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	current := -1
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return // unsupported runtime: leave GOGC alone
		}
		if p := Percent(sample[0].Value.Uint64()); p != current {
			debug.SetGCPercent(p)
			current = p
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
