package session

// holdForBacklog pauses c's reader while its replies are not being taken
// by its client fast enough (backlog.over) or too many of its reads wait
// behind its writes; it returns at once otherwise, and as soon as the
// connection dies. Nothing queued is dropped or reordered: the writer
// goes on writing, in order, and each of its steps lets the reader look
// again. A client that never reads again is cut off by the writer's
// timeout (Config.WriteTimeout) and its backlog released.
func (c *conn) holdForBacklog() {
	counted := false
	for {
		ch := c.backlogWait()
		if ch == nil {
			return
		}
		if !counted {
			c.srv.backlog.stalls.Add(1)
			counted = true
		}
		<-ch
	}
}

// backlogWait returns a channel to wait on if c's reader must pause, nil
// if it may read on. The common case (no pause) allocates nothing; when
// pausing, the channel is registered before the conditions are checked
// again, so a change after that check still closes it.
func (c *conn) backlogWait() <-chan struct{} {
	if !c.mustPause() {
		return nil
	}
	o := c.out
	o.mu.Lock()
	if o.drained == nil {
		o.drained = make(chan struct{})
	}
	ch := o.drained
	o.mu.Unlock()
	if !c.mustPause() {
		return nil
	}
	return ch
}

// mustPause reports whether c's reader must pause now. It runs after
// every request, so the common case (every backlog within bounds) reads
// only counters, without taking a lock.
func (c *conn) mustPause() bool {
	o := c.out
	if o.unsent.Load() <= MaxUnsentPerConn && c.srv.backlog.total.Load() <= MaxUnsentTotal &&
		c.parked.Load() < maxParkedReads {
		return false
	}
	o.mu.Lock()
	gone, unsent := o.dead || o.closing, o.unsentLocked()
	o.mu.Unlock()
	if gone {
		return false
	}
	return c.srv.backlog.over(unsent) || c.parkedReads() >= maxParkedReads
}

// wakeReader lets c's paused reader look again (its parked reads were
// answered).
func (o *outbound) wakeReader() {
	o.mu.Lock()
	o.wakeReaderLocked()
	o.mu.Unlock()
}

// parkedReads is how many of c's reads wait behind its writes.
func (c *conn) parkedReads() int { return int(c.parked.Load()) }

// maxParkedBody is the largest read body that parks behind a write (a
// multiRead of about 1,100 ops: well under a millisecond of the FSM's
// time under its write lock); a larger read waits for the writes
// instead (conn.read).
const maxParkedBody = 16 << 10

// awaitWrites returns once none of c's writes is in flight (each applied
// or failed, their replies and parked reads queued), or c is going away.
// Only the reader adds writes, so none is added meanwhile.
func (c *conn) awaitWrites() {
	o := c.out
	for {
		o.mu.Lock()
		if o.drained == nil {
			o.drained = make(chan struct{})
		}
		ch := o.drained
		o.mu.Unlock()
		if !c.hasPending() || o.isGone() {
			return
		}
		<-ch
	}
}
