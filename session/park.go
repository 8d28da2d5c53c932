package session

import (
	"errors"
	"os"
	"time"
)

// parkAfter is how long a connection's reader waits for the next request
// in its goroutine before the connection is parked (parker): a busy
// connection never is, an idle one costs no goroutine.
const parkAfter = time.Second

// park waits up to parkAfter for c's socket to become readable and
// reports false when it did (or the wait failed: the read that follows
// sees why). Otherwise it hands the socket to the parker and reports
// true: the caller's goroutine returns, and a new one resumes reading
// when a request arrives. Where there is no parker it only waits.
//
// The wait's deadline stays on the socket after a request arrives, and is
// moved only once less than half of parkAfter is left, so a busy
// connection sets it about twice a second rather than twice per request.
func (c *conn) park(fr *frameReader) bool {
	p := c.srv.parker
	if fr.raw == nil {
		return false
	}
	if p == nil {
		_ = fr.raw.Read(fr.wait)
		return false
	}
	start := time.Now()
	until := start.Add(parkAfter)
	for {
		if fr.deadline.Sub(start) < parkAfter/2 || fr.deadline.After(until) {
			fr.deadline = until
			_ = fr.dl.SetReadDeadline(until)
		}
		err := fr.raw.Read(fr.wait)
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			fr.hot = err == nil
			return false
		}
		if !time.Now().Before(until) {
			break
		}
		fr.deadline = time.Time{} // expired early: wait out the rest
	}
	fr.clearDeadline()
	fd := -1
	if fr.raw.Control(func(f uintptr) { fd = int(f) }) != nil || fd < 0 {
		return false
	}
	return p.park(fd, c)
}

// unpark takes c out of the parker's set before its socket is closed.
func (c *conn) unpark() { c.srv.parker.unpark(c) }
