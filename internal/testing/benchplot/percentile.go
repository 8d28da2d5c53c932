package benchplot

import "math"

// maxNines is where PercentileX puts the maximum (q = 1): one decade past
// 99.99%.
const maxNines = 5

// PercentileX places quantile q (0..1) on a latency-by-percentile axis,
// where each further nine (90%, 99%, 99.9%) takes the same width:
// -log10(1-q), with the maximum one decade past 99.99%.
func PercentileX(q float64) float64 {
	if q >= 1 {
		return maxNines
	}
	return math.Min(-math.Log10(1-q), maxNines)
}

// PercentileTicks labels the axis of PercentileX from 0% to the maximum.
func PercentileTicks() []Tick {
	return []Tick{
		{0, "0%"}, {PercentileX(0.5), "50%"}, {1, "90%"}, {2, "99%"}, {3, "99.9%"}, {4, "99.99%"}, {maxNines, "max"},
	}
}
