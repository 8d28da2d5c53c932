package server

import (
	"math"
	"testing"
	"time"
)

// TestZooConfigMillisPastDuration: a number of milliseconds past what a
// time.Duration holds (about 292 years) reads as the longest duration,
// not wrapped. admin.rateLimiterIntervalInMS is a long in ZooKeeper, so
// Long.MAX_VALUE ("never again") is a value an operator may write; it
// wrapped to -1 ms, which the snapshot command reads as no limit at all.
func TestZooConfigMillisPastDuration(t *testing.T) {
	for cfg, get := range map[string]func(Config) time.Duration{
		"admin.rateLimiterIntervalInMS=9223372036854775807\n": func(c Config) time.Duration { return c.AdminRateLimit },
		"admin.rateLimiterIntervalInMS=10000000000000\n":      func(c Config) time.Duration { return c.AdminRateLimit },
		"admin.idleTimeout=9223372036854775807\n":             func(c Config) time.Duration { return c.AdminIdleTimeout },
	} {
		st, _ := mustApply(t, cfg)
		if got := get(st); got != math.MaxInt64 {
			t.Errorf("%q: %v (%d ns), want %v", cfg, got, int64(got), time.Duration(math.MaxInt64))
		}
	}
	st, _ := mustApply(t, "admin.rateLimiterIntervalInMS=-9223372036854775808\n")
	if st.AdminRateLimit != math.MinInt64 {
		t.Errorf("rate limit -2^63 ms: %v, want %v", st.AdminRateLimit, time.Duration(math.MinInt64))
	}
}
