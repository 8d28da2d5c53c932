package ensemble

import (
	"errors"
	"io"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/raft"
)

// A leader's contact with each other member, as its append streams see
// it (the leader side of appendTransport): which of its requests the
// member last answered, and whether the member has gone since. quorum.go
// reads it to decide whether the leader still has a quorum.
//
// A member is gone from the moment one of its connections is closed by
// its side (a read or write finds the end of the stream or a reset; an
// idle pooled connection is read for this, watchIdle) or a dial to it is
// refused: its process is stopping or gone, as a ZooKeeper leader learns
// when a follower's socket closes. It is back once it answers a request
// sent after that.

// memberContact is what the leader knows of one member's answers. Times
// are nanoseconds on the transport's monotonic clock (appendTransport.now).
type memberContact struct {
	// sent is when the newest request the member answered was sent: the
	// member heard from the leader after then.
	sent atomic.Int64
	// answered is when its last answer came.
	answered atomic.Int64
	// closed is when one of its connections was last seen closed by its
	// side, or a dial to it refused (0: never).
	closed atomic.Int64
}

// heard notes an answer to a request sent at sent (transport clock).
func (m *memberContact) heard(sent, now int64) {
	for {
		old := m.sent.Load()
		if sent <= old || m.sent.CompareAndSwap(old, sent) {
			break
		}
	}
	m.answered.Store(now)
}

// inContact reports whether the member answered a request sent after
// since and after it was last seen gone, and that request was sent
// within window of now.
func (m *memberContact) inContact(since, now int64, window time.Duration) bool {
	sent := max(m.sent.Load(), since)
	return sent > m.closed.Load() && now-sent < int64(window)
}

// now is the transport's monotonic clock: nanoseconds since it started.
func (t *appendTransport) now() int64 { return int64(time.Since(t.epoch)) }

// clockAt is t on the transport's clock.
func (t *appendTransport) clockAt(at time.Time) int64 { return int64(at.Sub(t.epoch)) }

// contactOf is target's contact record, created at first use.
func (t *appendTransport) contactOf(target raft.ServerAddress) *memberContact {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.contacts[target]
	if m == nil {
		m = new(memberContact)
		t.contacts[target] = m
	}
	return m
}

// memberGone notes that target closed a connection or refused a dial,
// and wakes whoever watches the contacts (contactLost) unless it was
// already gone (a leader dials a member that is down every memberRedial).
func (t *appendTransport) memberGone(target raft.ServerAddress) {
	m := t.contactOf(target)
	closed := m.closed.Load()
	m.closed.Store(t.now())
	if closed != 0 && closed >= m.sent.Load() {
		return
	}
	select {
	case t.contactLost <- struct{}{}:
	default:
	}
}

// goneIf calls memberGone when err says target's side closed the
// connection or refused it.
func (t *appendTransport) goneIf(target raft.ServerAddress, err error) {
	if closedByPeer(err) {
		t.memberGone(target)
	}
}

// closedByPeer reports whether err is the other side ending a connection
// (or refusing one): not a timeout, nor this side's own Close.
func closedByPeer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNREFUSED)
}

// watchIdle reads c, a connection put back in the pool, until it is
// taken again (unwatch) or the other side closes it: then it is dropped
// from the pool and its member noted gone at once, where otherwise only
// the next heartbeat, up to P/5 later, would find out. A connection left
// in the pool for half of memberIdle is retired: closed by this side
// before the member's idle limit (idleconn.go) closes it from the other,
// which would count as the member gone.
func (t *appendTransport) watchIdle(target raft.ServerAddress, c *appendConn) {
	var retire time.Time // none: the last request's deadline is not the pool's
	if idle := time.Duration(t.mux.idle.Load()); idle > 0 {
		retire = time.Now().Add(idle / 2)
	}
	_ = c.c.SetReadDeadline(retire)
	c.watched = make(chan struct{})
	go func() {
		defer close(c.watched)
		_, err := c.dec.r.Peek(1)
		c.watchErr = err
		if errors.Is(err, os.ErrDeadlineExceeded) {
			// unwatch's deadline, or the pool's own (retire).
			if !t.unpool(target, c) {
				return // unwatch: the connection is being taken
			}
			c.watchErr = errRetired
			c.c.Close()
			return
		}
		if err == nil {
			c.watchErr = errNotAppend // the member sent something unasked
		}
		t.unpool(target, c)
		c.c.Close()
		t.goneIf(target, err)
	}()
}

// unpool removes c from target's pool and reports whether it was there
// (not taken by idle).
func (t *appendTransport) unpool(target raft.ServerAddress, c *appendConn) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	conns := t.pool[target]
	for i, pc := range conns {
		if pc == c {
			t.pool[target] = append(conns[:i:i], conns[i+1:]...)
			return true
		}
	}
	return false
}

// unwatch stops watchIdle on c, taken from the pool, and reports whether
// c is still usable.
func (t *appendTransport) unwatch(target raft.ServerAddress, c *appendConn) bool {
	if c.watched == nil {
		return true
	}
	_ = c.c.SetReadDeadline(time.Unix(1, 0))
	<-c.watched
	c.watched = nil
	if !errors.Is(c.watchErr, os.ErrDeadlineExceeded) {
		c.c.Close()
		t.goneIf(target, c.watchErr)
		return false
	}
	_ = c.c.SetReadDeadline(time.Time{})
	return true
}

// answersWithin sends target a heartbeat in this leader's term and
// reports whether it answered within wait (false too when no append was
// ever sent to it, or it answered from a later term). The heartbeat goes
// on waiting in the background if it must.
func (t *appendTransport) answersWithin(target raft.ServerAddress, wait time.Duration) bool {
	t.mu.Lock()
	tmpl := t.templates[target]
	t.mu.Unlock()
	if tmpl == nil {
		return false
	}
	req := &raft.AppendEntriesRequest{RPCHeader: tmpl.RPCHeader, Term: tmpl.Term, Leader: tmpl.Leader}
	done := make(chan bool, 1)
	go func() {
		resp := new(raft.AppendEntriesResponse)
		err := t.AppendEntries("", target, req, resp)
		done <- err == nil && resp.Term == req.Term
	}()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case ok := <-done:
		return ok
	case <-timer.C:
		return false
	}
}
