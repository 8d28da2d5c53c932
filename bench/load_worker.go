package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// A fleet worker holds a share of a load class's sessions, in a process
// of its own (`zkraft bench --worker`, so that no process needs more
// file descriptors than RLIMIT_NOFILE allows) or in the coordinator's
// (tests, small runs). The coordinator sends it one JSON request per
// line and reads one JSON reply per line; requests are served in order.
// Times cross the process boundary as wall-clock nanoseconds.

// workerRequest is one command to a worker.
type workerRequest struct {
	Op string `json:"op"` // open, arm, round, herd, status, resumes, check, close

	// open
	Servers     []string `json:"servers,omitempty"`
	First       int      `json:"first,omitempty"`       // global index of the first session
	Count       int      `json:"count,omitempty"`       // sessions to open
	TimeoutMs   int      `json:"timeout_ms,omitempty"`  // requested session timeout
	Resume      bool     `json:"resume,omitempty"`      // resume sessions whose connection breaks
	Concurrency int      `json:"concurrency,omitempty"` // handshakes at once
	Sources     int      `json:"sources,omitempty"`     // loopback source addresses (LoadOptions.Sources)
	Ephemerals  string   `json:"ephemerals,omitempty"`  // create an ephemeral per session under this path
	Watch       string   `json:"watch,omitempty"`       // herd: the znode whose changes the sessions re-read
	Since       int64    `json:"since_ns,omitempty"`    // resumes: count resumptions after this wall time
	WaitMs      int      `json:"wait_ms,omitempty"`     // close: closeSession wait
}

// workerReply is a worker's answer; Err is set when the request failed.
type workerReply struct {
	Err string `json:"err,omitempty"`

	Opened   int   `json:"opened,omitempty"`
	Failed   int   `json:"failed,omitempty"`
	OpenedAt int64 `json:"opened_ns,omitempty"` // wall time the last session opened

	Armed int `json:"armed,omitempty"`
	Bad   int `json:"bad,omitempty"` // requests answered with an error

	Herd herdCounts `json:"herd"`
	CPU  int64      `json:"cpu_ns,omitempty"` // round, herd: the CPU time this worker's process has used

	Sessions sessionCounts `json:"sessions"`
	Resumes  []int64       `json:"resumes,omitempty"` // ns after Since, one per resumed session
	Broke    []int64       `json:"broke,omitempty"`   // ns after Since its connection broke, one per resumed session
	On       []string      `json:"on,omitempty"`      // the server it resumed on, one per resumed session

	Checked int `json:"checked,omitempty"` // sessions whose check request succeeded
	Broken  int `json:"broken,omitempty"`  // herd: connections broken so far
}

// herdCounts is a worker's share of one herd round.
type herdCounts struct {
	Events     int   `json:"events"`
	Rereads    int   `json:"rereads"`
	BadRereads int   `json:"bad_rereads"`
	Unexpected int   `json:"unexpected"` // notifications other than the watched znode's change
	LastEvent  int64 `json:"last_event_ns"`
	LastReread int64 `json:"last_reread_ns"`
}

// worker is the state of one fleet worker.
type worker struct {
	done     chan struct{} // closed on shutdown: stops the sessions' reconnections
	sessions []*loadSession
	broken   atomic.Int64 // connections of sessions that broke
	herd     herdWatch
}

// serveWorker serves requests from r, replies to w, until r ends; then
// it drops every session it holds.
func serveWorker(ctx context.Context, r io.Reader, w io.Writer) error {
	wk := &worker{done: make(chan struct{})}
	defer wk.shutdown()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	enc := json.NewEncoder(w)
	for sc.Scan() {
		var req workerRequest
		var rep workerReply
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			rep.Err = fmt.Sprintf("bad request: %v", err)
		} else if err := wk.serve(ctx, &req, &rep); err != nil {
			rep.Err = err.Error()
		}
		if err := enc.Encode(&rep); err != nil {
			return fmt.Errorf("bench worker: reply: %w", err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("bench worker: requests: %w", err)
	}
	return nil
}

// serve handles one request.
func (wk *worker) serve(ctx context.Context, req *workerRequest, rep *workerReply) error {
	switch req.Op {
	case "open":
		return wk.open(ctx, req, rep)
	case "arm":
		rep.Armed, rep.Bad = wk.each(ctx, func(c *conn, h replyHandler) error { return c.GetData(wk.herd.path, true, classNone, h, 0) })
	case "round":
		wk.herd.reset()
		rep.CPU = int64(processCPU())
	case "herd":
		rep.Herd = wk.herd.counts()
		rep.Broken = int(wk.broken.Load())
		rep.CPU = int64(processCPU())
	case "status":
		for _, s := range wk.sessions {
			rep.Sessions.add(s)
		}
	case "resumes":
		rep.Broke, rep.Resumes, rep.On = resumeTimes(wk.sessions, req.Since)
	case "check":
		rep.Checked, rep.Bad = wk.each(ctx, func(c *conn, h replyHandler) error { return c.Exists("/", false, classNone, h, 0) })
		for _, s := range wk.sessions {
			rep.Sessions.add(s)
		}
	case "close":
		wk.closeAll(time.Duration(req.WaitMs) * time.Millisecond)
	default:
		return fmt.Errorf("unknown op %q", req.Op)
	}
	return nil
}

// open connects req.Count sessions, req.Concurrency at a time.
func (wk *worker) open(ctx context.Context, req *workerRequest, rep *workerReply) error {
	if len(req.Servers) == 0 || req.Count < 0 || req.TimeoutMs <= 0 {
		return errors.New("open: servers, count and timeout needed")
	}
	timeout := time.Duration(req.TimeoutMs) * time.Millisecond
	opts := dialOptions{timeout: timeout, dialWait: timeout / 2, inflight: 4, readBuf: 512}
	if req.Watch != "" {
		wk.herd.path = req.Watch
		opts.events = &wk.herd
	}
	sessions := make([]*loadSession, req.Count)
	for i := range sessions {
		o := opts
		o.local = sourceAddr(req.First+i, req.Sources)
		sessions[i] = newLoadSession(req.First+i, req.Servers, o, req.Resume, wk.done, &wk.broken)
	}
	var (
		wg     sync.WaitGroup
		next   atomic.Int64
		failed atomic.Int64
		first  atomic.Pointer[error]
		last   atomic.Int64
	)
	for range max(req.Concurrency, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(sessions) {
					return
				}
				s := sessions[i]
				err := s.open(ctx, 3 /* attempts */)
				if err == nil && req.Ephemerals != "" {
					err = createEphemeral(ctx, s.conn(), fmt.Sprintf("%s/s%07d", req.Ephemerals, s.idx), &tally{})
				}
				if err != nil {
					failed.Add(1)
					first.CompareAndSwap(nil, &err)
					continue
				}
				storeMax(&last, wallNanos())
			}
		}()
	}
	wg.Wait()
	wk.sessions = append(wk.sessions, sessions...)
	rep.Opened, rep.Failed, rep.OpenedAt = len(sessions)-int(failed.Load()), int(failed.Load()), last.Load()
	if p := first.Load(); p != nil {
		return fmt.Errorf("open: %d of %d sessions failed, first: %w", failed.Load(), len(sessions), *p)
	}
	return nil
}

// createEphemeral creates an ephemeral znode at path on c and waits for it.
func createEphemeral(ctx context.Context, c *conn, path string, t *tally) error {
	if c == nil {
		return ErrClosed
	}
	if err := c.Create(path, nil, jute.FlagEphemeral, classNone, t, 0); err != nil {
		return err
	}
	if err := c.Barrier(ctx); err != nil {
		return err
	}
	return t.check("create " + path)
}

// each sends one request (by send) on every connected session and waits
// for the answers; it returns how many succeeded and how many failed.
func (wk *worker) each(ctx context.Context, send func(*conn, replyHandler) error) (ok, bad int) {
	var live []*conn
	for _, s := range wk.sessions {
		if c := s.conn(); c != nil {
			live = append(live, c)
		}
	}
	cd := newCountdown(len(live))
	for _, c := range live {
		if err := send(c, cd); err != nil { // broke meanwhile: counted as failed
			cd.handleReply(nil, jute.ErrConnectionLoss, nil)
		}
	}
	_ = cd.wait(ctx)
	bad = int(cd.bad.bad.Load())
	return len(live) - bad, bad
}

// closeAll closes every session, 256 at a time.
func (wk *worker) closeAll(wait time.Duration) {
	if wait <= 0 {
		wait = 2 * time.Second
	}
	sem := make(chan struct{}, 256)
	var wg sync.WaitGroup
	for _, s := range wk.sessions {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			s.close(wait)
		}()
	}
	wg.Wait()
	wk.sessions = nil
}

// shutdown stops reconnections and drops every connection left.
func (wk *worker) shutdown() {
	close(wk.done)
	for _, s := range wk.sessions {
		s.mu.Lock()
		c := s.c
		s.state = stateClosed
		s.mu.Unlock()
		if c != nil {
			c.Abort()
		}
	}
}

// herdWatch is the herd's event handler on every session of a worker:
// on the watched znode's change a session re-reads it with a watch,
// re-arming it, at once, as a client's watcher does. It counts the
// round's notifications and re-reads and keeps the latest time of each.
type herdWatch struct {
	path       string
	events     atomic.Int64
	rereads    atomic.Int64
	bad        atomic.Int64
	unexpected atomic.Int64
	lastEvent  atomic.Int64
	lastReread atomic.Int64
}

// handleEvent is called on the session's reader goroutine; the re-read
// takes one of the session's free in-flight slots, so it cannot block.
func (h *herdWatch) handleEvent(c *conn, ev *jute.WatcherEvent, _ int64) {
	if ev.Type != jute.EventNodeDataChanged || ev.Path != h.path {
		h.unexpected.Add(1)
		return
	}
	storeMax(&h.lastEvent, wallNanos())
	h.events.Add(1)
	if err := c.GetData(h.path, true, classNone, h, 0); err != nil {
		h.bad.Add(1)
	}
}

// handleReply counts a re-read's answer.
func (h *herdWatch) handleReply(_ *pendingOp, err jute.ErrCode, _ []byte) {
	if err != jute.OK {
		h.bad.Add(1)
		return
	}
	storeMax(&h.lastReread, wallNanos())
	h.rereads.Add(1)
}

// reset starts a round.
func (h *herdWatch) reset() {
	for _, v := range []*atomic.Int64{&h.events, &h.rereads, &h.bad, &h.unexpected, &h.lastEvent, &h.lastReread} {
		v.Store(0)
	}
}

// counts returns the round so far.
func (h *herdWatch) counts() herdCounts {
	return herdCounts{Events: int(h.events.Load()), Rereads: int(h.rereads.Load()), BadRereads: int(h.bad.Load()),
		Unexpected: int(h.unexpected.Load()), LastEvent: h.lastEvent.Load(), LastReread: h.lastReread.Load()}
}

// storeMax raises v to x if x is larger.
func storeMax(v *atomic.Int64, x int64) {
	for {
		old := v.Load()
		if x <= old || v.CompareAndSwap(old, x) {
			return
		}
	}
}
