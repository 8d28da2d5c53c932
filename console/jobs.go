package console

import (
	"context"
	"errors"
	"strconv"
	"sync"
)

// Bounds on a login's background jobs.
const (
	maxRunningJobs = 1 // running at once per login
	keptJobs       = 4 // finished jobs a login can still look at
)

// The states of a job.
const (
	jobRunning   = "running"
	jobDone      = "done"
	jobFailed    = "failed"
	jobCancelled = "cancelled"
)

// job is one background subtree operation of a login (a recursive delete,
// copy, move or import): run on the login's own ZooKeeper session, so its
// ACLs apply, and ended with the login.
type job struct {
	id     string
	kind   string
	cancel context.CancelFunc

	mu       sync.Mutex
	state    string
	phase    string // checking, copying, deleting, importing
	done     int
	total    int
	current  string // the path being worked on
	err      string
	code     string // ZooKeeper's error name, when it said no
	atomic   bool   // done as one multi: all or nothing
	from, to string
	skipped  []string // ephemeral nodes not copied (the first maxListed)
	nSkipped int
}

// maxListed bounds the paths a job or survey lists (skipped ephemerals).
const maxListed = 100

// jobJSON is a job as the page sees it.
type jobJSON struct {
	ID           string   `json:"id"`
	Kind         string   `json:"kind"`
	From         string   `json:"from,omitempty"`
	To           string   `json:"to,omitempty"`
	State        string   `json:"state"`
	Phase        string   `json:"phase"`
	Done         int      `json:"done"`
	Total        int      `json:"total"`
	Current      string   `json:"current,omitempty"`
	Error        string   `json:"error,omitempty"`
	Code         string   `json:"code,omitempty"`
	Atomic       bool     `json:"atomic"`
	Skipped      []string `json:"skipped,omitempty"`
	SkippedCount int      `json:"skippedCount,omitempty"`
}

func (j *job) json() jobJSON {
	j.mu.Lock()
	defer j.mu.Unlock()
	return jobJSON{ID: j.id, Kind: j.kind, From: j.from, To: j.to, State: j.state, Phase: j.phase,
		Done: j.done, Total: j.total, Current: j.current, Error: j.err, Code: j.code, Atomic: j.atomic,
		Skipped: append([]string(nil), j.skipped...), SkippedCount: j.nSkipped}
}

// progress sets the job's phase and counts.
func (j *job) progress(phase string, done, total int, current string) {
	j.mu.Lock()
	j.phase, j.done, j.total, j.current = phase, done, total, current
	j.mu.Unlock()
}

// skip notes an ephemeral node left out.
func (j *job) skip(p string) {
	j.mu.Lock()
	if len(j.skipped) < maxListed {
		j.skipped = append(j.skipped, p)
	}
	j.nSkipped++
	j.mu.Unlock()
}

// finish ends the job with err's outcome.
func (j *job) finish(err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	switch {
	case err == nil:
		j.state, j.current = jobDone, ""
	case errors.Is(err, context.Canceled):
		j.state, j.err = jobCancelled, "cancelled"
	default:
		j.state, j.err, j.code = jobFailed, err.Error(), codeOf(err)
	}
}

// running reports whether the job has not ended.
func (j *job) running() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.state == jobRunning
}

// jobStore holds each login's jobs, the running ones and the last
// finished ones, until the login ends.
type jobStore struct {
	mu      sync.Mutex
	next    int
	byLogin map[*login][]*job
}

func newJobStore() *jobStore { return &jobStore{byLogin: make(map[*login][]*job)} }

// errJobRunning refuses a job while the login's bound of running ones is
// taken.
var errJobRunning = errors.New("a job of yours is still running: wait for it or cancel it")

// start runs work as a new job of l, unless l already runs
// maxRunningJobs. The job's context ends when it is cancelled or l ends.
func (s *jobStore) start(l *login, j *job, work func(ctx context.Context, j *job) error) error {
	s.mu.Lock()
	list, known := s.byLogin[l]
	running := 0
	for _, o := range list {
		if o.running() {
			running++
		}
	}
	if running >= maxRunningJobs {
		s.mu.Unlock()
		return errJobRunning
	}
	// Drop the oldest finished jobs beyond keptJobs.
	kept := list[:0]
	finished := len(list) - running
	for _, o := range list {
		if !o.running() && finished > keptJobs-1 {
			finished--
			continue
		}
		kept = append(kept, o)
	}
	s.next++
	j.id = strconv.Itoa(s.next)
	j.state = jobRunning
	ctx, cancel := context.WithCancel(context.Background())
	j.cancel = cancel
	s.byLogin[l] = append(kept, j)
	s.mu.Unlock()
	if !known {
		go func() {
			<-l.ended
			s.mu.Lock()
			delete(s.byLogin, l)
			s.mu.Unlock()
		}()
	}
	go func() {
		defer cancel()
		select {
		case <-l.ended:
			cancel()
		case <-ctx.Done():
		}
	}()
	go func() {
		defer cancel()
		j.finish(work(ctx, j))
	}()
	return nil
}

// list returns l's jobs, oldest first.
func (s *jobStore) list(l *login) []*job {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*job(nil), s.byLogin[l]...)
}

// get returns l's job id.
func (s *jobStore) get(l *login, id string) (*job, bool) {
	for _, j := range s.list(l) {
		if j.id == id {
			return j, true
		}
	}
	return nil, false
}
