package bench

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// sessionState is where a load session stands.
type sessionState uint8

const (
	stateConnecting sessionState = iota + 1 // opening, not yet answered
	stateLive                               // connected
	stateResuming                           // its connection broke; reconnecting elsewhere
	stateExpired                            // a server answered that the session is gone
	stateLost                               // its connection broke and it was not (or could not be) resumed
	stateClosed                             // closed by us
)

// loadSession is one client session of the load classes (herd, storm,
// overload, connection table). It pings from the moment it opens (the
// conn's writer does) and, when resume is set, behaves as ZooKeeper's
// Java client when its connection breaks: after a random pause of up to a
// second it tries the next server of its list, presenting its id,
// password and last zxid, each attempt bounded by the session timeout
// divided by the number of servers, until a server resumes it, a server
// answers that it expired, or a session timeout and a half have passed
// (then it is lost). Like the Java client, which shuffles its server
// list, each session goes through the servers in an order of its own,
// so that the sessions of a dead member spread over the others.
type loadSession struct {
	idx     int
	servers []string
	opts    dialOptions // addr is set per attempt
	resume  bool
	done    <-chan struct{} // closed when the session's holder shuts down
	breaks  *atomic.Int64   // counts broken connections (nil: not counted)

	order []int // indexes of servers in the order the session tries them, from its first

	mu          sync.Mutex
	c           *conn // guarded by mu: the current connection, nil while none
	at          int   // guarded by mu: index in order of c's (or the last attempt's) server
	state       sessionState
	from        *resumeFrom    // guarded by mu: what the next attempt presents
	brokeAt     int64          // guarded by mu: wall ns the connection last broke (0: never)
	resumedAt   int64          // guarded by mu: wall ns of the last resumption (0: never)
	disconnects int            // guarded by mu
	attempts    int            // guarded by mu: attempts to resume
	failures    map[string]int // guarded by mu: failed attempts by kind (failureKind); nil while none
	breakKinds  map[string]int // guarded by mu: broken connections by kind (failureKind); nil while none
	lastErr     error          // guarded by mu: why the last attempt or connection failed
}

// wallNanos is the wall clock in nanoseconds: the clock the processes of
// a fleet share (nowNanos is monotonic but private to each process).
func wallNanos() int64 { return time.Now().UnixNano() }

// newLoadSession prepares session idx of servers (its first server is
// servers[idx%len]); open connects it.
func newLoadSession(idx int, servers []string, opts dialOptions, resume bool, done <-chan struct{}, breaks *atomic.Int64) *loadSession {
	s := &loadSession{idx: idx, servers: servers, opts: opts, resume: resume, done: done, breaks: breaks, state: stateConnecting}
	// A shuffled list (seeded by idx: the same each run), rotated to
	// start at servers[idx % len] so that the sessions start evenly spread.
	s.order = rand.New(rand.NewPCG(uint64(idx), 0x5eed)).Perm(len(servers))
	first := slices.Index(s.order, idx%len(servers))
	s.order = append(s.order[first:], s.order[:first]...)
	s.opts.onStop = s.stopped
	return s
}

// open creates the session on its first server, trying again (up to
// attempts times in all) when the connection or handshake fails.
func (s *loadSession) open(ctx context.Context, attempts int) error {
	var err error
	for a := 0; a < max(attempts, 1); a++ {
		if a > 0 {
			select {
			case <-time.After(time.Duration(a) * 200 * time.Millisecond):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		o := s.opts
		o.addr = s.servers[s.order[0]]
		var c *conn
		if c, err = dial(ctx, o); err == nil {
			s.install(c, false)
			return nil
		}
	}
	s.mu.Lock()
	s.state, s.lastErr = stateLost, err
	s.mu.Unlock()
	return err
}

// install makes c the session's connection.
func (s *loadSession) install(c *conn, resumed bool) {
	s.mu.Lock()
	s.c, s.state = c, stateLive
	if resumed {
		s.resumedAt = wallNanos()
	}
	s.mu.Unlock()
	if c.Err() != nil { // it broke before it was installed: stopped saw no session connection
		s.stopped(c)
	}
}

// stopped is the conn's onStop: the connection broke or was closed.
func (s *loadSession) stopped(c *conn) {
	s.mu.Lock()
	if s.c != c || s.state != stateLive { // an earlier connection, or closed by us
		s.mu.Unlock()
		return
	}
	s.c, s.from, s.brokeAt, s.lastErr = nil, c.resumeFrom(), wallNanos(), c.err
	s.disconnects++
	addKind(&s.breakKinds, failureKind(c.err), 1)
	if s.breaks != nil {
		s.breaks.Add(1)
	}
	if !s.resume {
		s.state = stateLost
		s.mu.Unlock()
		return
	}
	s.state = stateResuming
	s.mu.Unlock()
	go s.reconnect()
}

// reconnect resumes the session on the next servers in turn, as
// ZooKeeper's client does.
func (s *loadSession) reconnect() {
	s.mu.Lock()
	giveUp := s.brokeAt + int64(s.opts.timeout*3/2)
	s.mu.Unlock()
	attemptWait := s.opts.timeout / time.Duration(len(s.servers))
	for {
		select {
		case <-time.After(rand.N(time.Second)):
		case <-s.done:
			return
		}
		s.mu.Lock()
		if s.state != stateResuming {
			s.mu.Unlock()
			return
		}
		s.at = (s.at + 1) % len(s.order)
		s.attempts++
		o := s.opts
		o.addr, o.resume, o.dialWait = s.servers[s.order[s.at]], s.from, attemptWait
		s.mu.Unlock()
		c, err := dial(context.Background(), o)
		if err == nil {
			s.install(c, true)
			return
		}
		s.mu.Lock()
		s.lastErr = err
		addKind(&s.failures, failureKind(err), 1)
		switch {
		case errors.Is(err, jute.ErrSessionExpired):
			s.state = stateExpired
		case wallNanos() > giveUp:
			s.state = stateLost
		}
		again := s.state == stateResuming
		s.mu.Unlock()
		if !again {
			return
		}
	}
}

// conn returns the session's connection, nil while it has none.
func (s *loadSession) conn() *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.c
}

// close ends the session with closeSession (bounded by wait) if it is
// connected; it does nothing to a session that is gone.
func (s *loadSession) close(wait time.Duration) {
	s.mu.Lock()
	c := s.c
	if s.state == stateLive || s.state == stateResuming || s.state == stateConnecting {
		s.state = stateClosed
	}
	s.mu.Unlock()
	if c != nil {
		_ = c.Close(wait, classNone)
	}
}

// sessionCounts tallies sessions by state, and their breaks.
type sessionCounts struct {
	Live        int `json:"live"`
	Resuming    int `json:"resuming"`
	Expired     int `json:"expired"`
	Lost        int `json:"lost"`
	Disconnects int `json:"disconnects"` // connections broken, all sessions together
	Resumed     int `json:"resumed"`     // sessions resumed at least once
	Attempts    int `json:"attempts"`    // attempts to resume, successful or not
	// Failures are the failed attempts to resume, Breaks the broken
	// connections, by kind (failureKind).
	Failures map[string]int `json:"failures,omitempty"`
	Breaks   map[string]int `json:"breaks,omitempty"`
	// LastResume is the wall time (ns) of the latest resumption (0: none).
	LastResume int64 `json:"last_resume_ns"`
	// FirstError is why one lost or expired session went, for the report.
	FirstError string `json:"first_error,omitempty"`
}

// add counts s into n.
func (n *sessionCounts) add(s *loadSession) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.state {
	case stateLive:
		n.Live++
	case stateResuming, stateConnecting:
		n.Resuming++
	case stateExpired:
		n.Expired++
	case stateLost:
		n.Lost++
	}
	n.Disconnects += s.disconnects
	n.Attempts += s.attempts
	for k, v := range s.failures {
		addKind(&n.Failures, k, v)
	}
	for k, v := range s.breakKinds {
		addKind(&n.Breaks, k, v)
	}
	if s.resumedAt != 0 {
		n.Resumed++
		n.LastResume = max(n.LastResume, s.resumedAt)
	}
	if (s.state == stateExpired || s.state == stateLost) && n.FirstError == "" && s.lastErr != nil {
		n.FirstError = s.lastErr.Error()
	}
}

// merge adds o into n.
func (n *sessionCounts) merge(o sessionCounts) {
	n.Live += o.Live
	n.Resuming += o.Resuming
	n.Expired += o.Expired
	n.Lost += o.Lost
	n.Disconnects += o.Disconnects
	n.Resumed += o.Resumed
	n.Attempts += o.Attempts
	for k, v := range o.Failures {
		addKind(&n.Failures, k, v)
	}
	for k, v := range o.Breaks {
		addKind(&n.Breaks, k, v)
	}
	n.LastResume = max(n.LastResume, o.LastResume)
	if n.FirstError == "" {
		n.FirstError = o.FirstError
	}
}

// addKind adds v to (*m)[k], making the map if needed.
func addKind(m *map[string]int, k string, v int) {
	if *m == nil {
		*m = map[string]int{}
	}
	(*m)[k] += v
}

// failureKind names what broke a connection or failed an attempt to
// resume, for the counts: the member refused the connection (it is
// down), closed it (during a handshake: it could not take the session,
// no quorum or behind the session's last zxid, or at its connection
// cap), answered that the session expired, did not answer in time (a
// read deadline: 2/3 of the session timeout without a byte once
// connected), or else the error itself.
func failureKind(err error) string {
	var ne net.Error
	switch {
	case err == nil:
		return "closed"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused"
	case errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.EPIPE):
		return "closed by the member"
	case errors.Is(err, jute.ErrSessionExpired):
		return "expired"
	case errors.As(err, &ne) && ne.Timeout():
		return "no answer in time"
	}
	return err.Error()
}

// resumeTimes returns, for every session that resumed after wall time
// since, how long after since its connection last broke and when it
// resumed (in ns), and the server it resumed on.
func resumeTimes(sessions []*loadSession, since int64) (broke, resumed []int64, on []string) {
	for _, s := range sessions {
		s.mu.Lock()
		if s.resumedAt >= since {
			broke, resumed = append(broke, s.brokeAt-since), append(resumed, s.resumedAt-since)
			on = append(on, s.servers[s.order[s.at]])
		}
		s.mu.Unlock()
	}
	return broke, resumed, on
}
