// Package gctune bounds the Go heap's headroom as the live heap grows.
//
// The collector lets the heap grow to (1 + GOGC/100) times the live heap
// before it collects again. With the default GOGC=100 a member holding a
// million znodes (~400 MiB live) would keep up to another 400 MiB of
// garbage resident between collections. Tune keeps GOGC at 100 while the
// live heap is small and lowers it as the heap grows, so the headroom stays
// near a fixed size (never below MinPercent): more frequent collections of
// a large, mostly static tree in exchange for a smaller footprint.
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
	// Headroom is the garbage allowed above the live heap once the live
	// heap is larger than Headroom.
	Headroom = 128 << 20
	// MinPercent bounds how far GOGC is lowered (at most 4 collections per
	// live heap's worth of allocation).
	MinPercent = 25
	// interval is how often the live heap is sampled.
	interval = 2 * time.Second
)

// Percent returns the GOGC value for a live heap of live bytes.
func Percent(live uint64) int {
	if live <= Headroom {
		return 100
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
	current := 100
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return // unsupported runtime: leave GOGC alone
		}
		if p := Percent(sample[0].Value.Uint64()); p != current {
			debug.SetGCPercent(p)
			current = p
		}
	}
}
