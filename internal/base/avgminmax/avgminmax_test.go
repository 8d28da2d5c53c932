package avgminmax

import (
	"sync"
	"testing"
)

func TestCounter(t *testing.T) {
	var c Counter
	if c.Count() != 0 || c.Sum() != 0 || c.Min() != 0 || c.Max() != 0 || c.Avg() != 0 {
		t.Fatal("zero value is not empty")
	}
	for _, v := range []int64{5, 0, 9, -3} {
		c.Add(v)
	}
	if c.Count() != 4 || c.Sum() != 14 || c.Min() != 0 || c.Max() != 9 || c.Avg() != 3.5 {
		t.Fatalf("count %d sum %d min %d max %d avg %v", c.Count(), c.Sum(), c.Min(), c.Max(), c.Avg())
	}
	c.Reset()
	c.Add(7)
	if c.Count() != 1 || c.Min() != 7 || c.Max() != 7 {
		t.Fatalf("after reset: count %d min %d max %d", c.Count(), c.Min(), c.Max())
	}
}

func TestCounterConcurrentAdds(t *testing.T) {
	var c Counter
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				c.Add(int64(g*1000 + i + 1))
			}
		}()
	}
	wg.Wait()
	if c.Count() != 8000 || c.Min() != 1 || c.Max() != 8000 || c.Sum() != 8000*8001/2 {
		t.Fatalf("count %d min %d max %d sum %d", c.Count(), c.Min(), c.Max(), c.Sum())
	}
}

// TestMeanRoundsAsZooKeeper: the average has four decimals, rounded half
// up on the double's exact value, as AvgMinMaxCounter.getAvg's BigDecimal.
func TestMeanRoundsAsZooKeeper(t *testing.T) {
	for _, c := range []struct {
		sum, count int64
		want       float64
	}{
		{0, 0, 0}, {12, 13, 0.9231}, {651, 398, 1.6357}, {1, 3, 0.3333}, {2, 3, 0.6667},
		{1, 32, 0.0313}, // 0.03125 exactly: half up, not to even
		{3, 32, 0.0938}, {1, 2000, 0.0005}, {1, 20001, 0}, {132, 1, 132},
		{10003, 20000, 0.5001}, // 0.50015 is 0.50014999... in binary
	} {
		if got := Mean(c.sum, c.count); got != c.want {
			t.Errorf("Mean(%d, %d) = %v, want %v", c.sum, c.count, got, c.want)
		}
	}
	var c Counter
	for _, v := range []int64{11, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0} {
		c.Add(v)
	}
	if c.Avg() != 0.9231 {
		t.Fatalf("Avg of 12 over 13 samples = %v, want 0.9231", c.Avg())
	}
}
