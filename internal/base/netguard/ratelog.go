package netguard

import (
	"sync"
	"time"
)

// DefaultLogInterval is how often a RateLog lets a line through when its
// Interval is zero.
const DefaultLogInterval = 10 * time.Second

// RateLog lets one log line through per interval for an event that can
// repeat thousands of times a second (an accept error, a refused
// connection): the first event is logged at once, the ones that follow
// within Interval are only counted, and the next line let through says
// how many were left out. The counts that matter are kept by Rejections;
// the log says that it is happening and why. Its zero value is ready to
// use (DefaultLogInterval); it is safe for concurrent use.
type RateLog struct {
	// Interval is the least time between two lines; zero means
	// DefaultLogInterval.
	Interval time.Duration

	mu         sync.Mutex
	last       time.Time // when the last line was let through; zero: never
	suppressed int64     // events since then that were not
	now        func() time.Time
}

// Allow reports whether the event happening now is to be logged and, if
// so, how many events were left out since the last line that was.
func (r *RateLog) Allow() (ok bool, suppressed int64) {
	if r == nil {
		return false, 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	if r.now != nil {
		now = r.now()
	}
	interval := r.Interval
	if interval <= 0 {
		interval = DefaultLogInterval
	}
	if !r.last.IsZero() && now.Sub(r.last) < interval {
		r.suppressed++
		return false, 0
	}
	suppressed, r.suppressed, r.last = r.suppressed, 0, now
	return true, suppressed
}
