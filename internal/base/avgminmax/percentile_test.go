package avgminmax

import "testing"

// TestPercentiles: the sample's percentiles are Dropwizard's
// UniformSnapshot values rounded as Java's Math.round, the counter's
// figures are kept beside them, and Reset starts both over.
func TestPercentiles(t *testing.T) {
	var p Percentile
	if got := p.Percentiles(); got != [4]int64{} {
		t.Fatalf("empty: %v", got)
	}
	for v := int64(1); v <= 100; v++ {
		p.Add(v)
	}
	// pos = q*101: 50.5 -> 50.5 -> 51 (half up); 95.95 -> 95.95 -> 96;
	// 99.99 -> 99.99 -> 100; 100.899 is past the end -> 100.
	if got, want := p.Percentiles(), [4]int64{51, 96, 100, 100}; got != want {
		t.Fatalf("1..100: %v, want %v", got, want)
	}
	if p.Count() != 100 || p.Sum() != 5050 || p.Min() != 1 || p.Max() != 100 || p.Avg() != 50.5 {
		t.Fatalf("counter: %d %d %d %d %v", p.Count(), p.Sum(), p.Min(), p.Max(), p.Avg())
	}
	p.Reset()
	p.Add(7)
	if got := p.Percentiles(); got != [4]int64{7, 7, 7, 7} || p.Count() != 1 {
		t.Fatalf("after reset: %v, count %d", got, p.Count())
	}
	// Past the reservoir's size the sample stays a sample of them all.
	p.Reset()
	for i := 0; i < 10*ReservoirSize; i++ {
		p.Add(int64(i % 1000))
	}
	if got := p.Percentiles(); got[0] < 400 || got[0] > 600 || got[3] < 990 {
		t.Fatalf("10x the reservoir of 0..999: %v", got)
	}
}

// BenchmarkPercentileAdd is the request path's cost of a latency sample
// (past the reservoir's size, where a random slot may be replaced).
func BenchmarkPercentileAdd(b *testing.B) {
	var p Percentile
	b.RunParallel(func(pb *testing.PB) {
		for i := int64(0); pb.Next(); i++ {
			p.Add(i & 63)
		}
	})
}
