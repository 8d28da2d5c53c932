// Package avgminmax is ZooKeeper's AvgMinMaxCounter: the count, sum,
// smallest and largest of non-negative integer samples (request
// latencies, log sync times), kept in atomics so that hot paths add to it
// without a lock.
package avgminmax

import (
	"math"
	"math/big"
	"sync/atomic"
)

// Counter summarizes samples. Its zero value is ready to use. A Reset
// racing with Add may leave one sample half counted, as ZooKeeper's does.
type Counter struct {
	count, sum atomic.Int64
	min1       atomic.Int64 // the smallest sample + 1; 0 before the first
	max        atomic.Int64
}

// Add counts one sample; a negative one counts as 0.
func (c *Counter) Add(v int64) {
	v = max(v, 0)
	c.count.Add(1)
	c.sum.Add(v)
	for {
		m := c.min1.Load()
		if (m != 0 && m <= v+1) || c.min1.CompareAndSwap(m, v+1) {
			break
		}
	}
	for {
		m := c.max.Load()
		if m >= v || c.max.CompareAndSwap(m, v) {
			break
		}
	}
}

// Reset forgets every sample.
func (c *Counter) Reset() {
	c.count.Store(0)
	c.sum.Store(0)
	c.min1.Store(0)
	c.max.Store(0)
}

// Count is the number of samples.
func (c *Counter) Count() int64 { return c.count.Load() }

// Sum is their total.
func (c *Counter) Sum() int64 { return c.sum.Load() }

// Min is the smallest, 0 before the first.
func (c *Counter) Min() int64 { return max(c.min1.Load()-1, 0) }

// Max is the largest, 0 before the first.
func (c *Counter) Max() int64 { return c.max.Load() }

// Avg is the mean rounded half up to four decimals, 0 before the first:
// AvgMinMaxCounter.getAvg, which srvr, mntr and the AdminServer print.
func (c *Counter) Avg() float64 { return Mean(c.sum.Load(), c.count.Load()) }

// Mean is sum/count as AvgMinMaxCounter.getAvg gives it: the double
// quotient rounded half up to four decimals by its exact binary value
// (new BigDecimal(double).setScale(4, HALF_UP)), 0 when count is 0.
func Mean(sum, count int64) float64 {
	if count == 0 {
		return 0
	}
	q := float64(sum) / float64(count)
	if math.IsInf(q, 0) || math.IsNaN(q) {
		return q
	}
	r, _ := new(big.Rat).SetString("1/2")
	x := new(big.Rat).SetFloat64(math.Abs(q))
	x.Mul(x, big.NewRat(10000, 1)).Add(x, r)
	n := new(big.Int).Quo(x.Num(), x.Denom()) // floor: x is not negative
	out, _ := new(big.Rat).SetFrac(n, big.NewInt(10000)).Float64()
	return math.Copysign(out, q)
}
