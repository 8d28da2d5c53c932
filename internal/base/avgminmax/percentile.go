package avgminmax

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
)

// ReservoirSize is how many samples a Percentile keeps: ZooKeeper's
// ResettableUniformReservoir's DEFAULT_SIZE.
const ReservoirSize = 4096

// Percentile is ZooKeeper's AvgMinMaxPercentileCounter (readlatency,
// updatelatency): a Counter, and a uniform sample of at most
// ReservoirSize of the values added since the start or the last Reset
// (Vitter's algorithm R, as its reservoir), from which mntr's p50, p95,
// p99 and p999 are read. Add is lock-free, for hot paths.
type Percentile struct {
	Counter
	seen    atomic.Int64
	samples [ReservoirSize]atomic.Int64
}

// Add counts one sample; a negative one counts as 0.
func (p *Percentile) Add(v int64) {
	v = max(v, 0)
	p.Counter.Add(v)
	n := p.seen.Add(1)
	if n <= ReservoirSize {
		p.samples[n-1].Store(v)
		return
	}
	if r := rand.Int64N(n); r < ReservoirSize {
		p.samples[r].Store(v)
	}
}

// Reset starts the counter and the sample over.
func (p *Percentile) Reset() {
	p.Counter.Reset()
	p.seen.Store(0)
}

// Quantiles are the p50, p95, p99 and p999 mntr prints.
var Quantiles = [...]float64{0.5, 0.95, 0.99, 0.999}

// Percentiles returns the Quantiles of the sample, each as ZooKeeper
// prints it: Dropwizard's UniformSnapshot.getValue (interpolated between
// the two samples around quantile × (n+1)) rounded by Java's Math.round;
// 0 without samples.
func (p *Percentile) Percentiles() [len(Quantiles)]int64 {
	n := min(p.seen.Load(), ReservoirSize)
	vals := make([]int64, n)
	for i := range vals {
		vals[i] = p.samples[i].Load()
	}
	slices.Sort(vals)
	var out [len(Quantiles)]int64
	for i, q := range Quantiles {
		out[i] = int64(math.Floor(snapshotValue(vals, q) + 0.5))
	}
	return out
}

// snapshotValue is UniformSnapshot.getValue over sorted values.
func snapshotValue(sorted []int64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	pos := q * float64(len(sorted)+1)
	index := int(pos)
	if index < 1 {
		return float64(sorted[0])
	}
	if index >= len(sorted) {
		return float64(sorted[len(sorted)-1])
	}
	lower, upper := float64(sorted[index-1]), float64(sorted[index])
	return lower + (pos-math.Floor(pos))*(upper-lower)
}
