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
