package learner

import (
	"errors"
	"fmt"
)

// ErrStopped ends Run once the Learner has stopped at the zxid StopAt
// named (or could not reach it: a resync by SNAP or TRUNC on the way).
var ErrStopped = errors.New("learner: stopped following")

// StopAt makes the Learner stop following once it has applied the
// transaction of zxid: it applies nothing after it, closes its
// connection to the leader, and Run returns ErrStopped. A live
// migration's cutover stops every zkraft observer at the same zxid. It
// fails if a later transaction is applied already. Status().Stopped
// then tells, and LastZxid where it stopped.
func (l *Learner) StopAt(zxid int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if last := l.f.Tree().LastZxid(); last > zxid {
		return fmt.Errorf("learner: cannot stop at %#x: %#x is applied already", zxid, last)
	}
	l.stopAt = zxid
	if l.f.Tree().LastZxid() == zxid {
		l.stopLocked()
	}
	return nil
}

// Unstop cancels StopAt: Run may follow again.
func (l *Learner) Unstop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopAt = 0
	l.status.Stopped = false
	l.notify()
}

// stopLocked marks the Learner stopped and ends its connection; l.mu is
// held.
func (l *Learner) stopLocked() {
	if !l.status.Stopped {
		l.status.Stopped = true
		l.notify()
	}
	if l.cur != nil {
		l.cur.nc.Close()
	}
}

// stopBefore reports, with l.mu held, whether the transaction of zxid is
// past the stop: it is not applied, and the Learner stops.
func (l *Learner) stopBefore(zxid int64) bool {
	if l.stopAt == 0 || zxid <= l.stopAt {
		return false
	}
	l.stopLocked()
	return true
}

// stopping reports whether StopAt is in force (l.mu held).
func (l *Learner) stopping() bool { return l.stopAt != 0 }
