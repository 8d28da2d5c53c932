package session

import (
	"math"
	"testing"
	"time"
)

// TestNegotiateBoundsPastInt32: a session timeout bound past what a
// ConnectResponse's int32 of milliseconds holds (maxSessionTimeout=30
// days, 2.592e9 ms) caps the negotiated timeout at math.MaxInt32 ms; it
// must not wrap to a negative timeout handed to every client.
func TestNegotiateBoundsPastInt32(t *testing.T) {
	c := Config{MinSessionTimeout: 4 * time.Second, MaxSessionTimeout: 30 * 24 * time.Hour}
	for _, req := range []int32{0, 30000, math.MaxInt32} {
		got := c.negotiate(req)
		want := max(req, 4000)
		if got != want {
			t.Errorf("negotiate(%d) with max %v = %d, want %d", req, c.MaxSessionTimeout, got, want)
		}
	}
	c = Config{MinSessionTimeout: 30 * 24 * time.Hour, MaxSessionTimeout: 40 * 24 * time.Hour}
	if got := c.negotiate(30000); got != math.MaxInt32 {
		t.Errorf("negotiate(30000) with min %v = %d, want %d", c.MinSessionTimeout, got, int32(math.MaxInt32))
	}
}
