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
// when a request arrives.
func (c *conn) park(fr *frameReader) bool {
	p := c.srv.parker
	if p == nil || fr.raw == nil {
		return false
	}
	nc := c.nc
	_ = nc.SetReadDeadline(time.Now().Add(parkAfter))
	err := fr.raw.Read(fr.wait)
	_ = nc.SetReadDeadline(time.Time{})
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		return false
	}
	fd := -1
	if fr.raw.Control(func(f uintptr) { fd = int(f) }) != nil || fd < 0 {
		return false
	}
	return p.park(fd, c)
}

// unpark takes c out of the parker's set before its socket is closed.
func (c *conn) unpark() { c.srv.parker.unpark(c) }
