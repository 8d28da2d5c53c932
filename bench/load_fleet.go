package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"sync"
	"time"
)

// LoadOptions are what every load class (RunHerd, RunStorm, RunOverload,
// RunTable) is given.
type LoadOptions struct {
	Servers []string // host:port of every member; session i starts on Servers[i % len]
	// Bin is a zkraft binary whose `bench --worker` processes hold the
	// class's many sessions, PerWorker at most each, so that no process
	// needs more file descriptors than RLIMIT_NOFILE allows; "" holds
	// them in this process.
	Bin       string
	PerWorker int // default 15000
	// SessionTimeout is every session's requested timeout (default 30 s).
	SessionTimeout time.Duration
	Concurrency    int // handshakes at once per worker (default 64)
	// Sources is how many loopback source addresses (127.0.0.2 on) the
	// sessions' connections come from, session i from the i%Sources-th,
	// when every server is on IPv4 loopback (default 16; 1: 127.0.0.1,
	// the system's choice). From one address, tens of thousands of
	// connections fill the ephemeral port range, and then every connect
	// spends milliseconds of kernel time searching it: a reconnect storm
	// measured the client's kernel instead of the servers.
	Sources int
	Root    string    // the znodes the class creates go here (default /zkraft-load)
	Log     io.Writer // the workers' stderr and progress notes (nil: none)
}

// defaults fills the zero fields.
func (o *LoadOptions) defaults() error {
	if len(o.Servers) == 0 {
		return errors.New("bench: no servers")
	}
	if o.PerWorker <= 0 {
		o.PerWorker = 15000
	}
	if o.SessionTimeout <= 0 {
		o.SessionTimeout = 30 * time.Second
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 64
	}
	if o.Root == "" {
		o.Root = "/zkraft-load"
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Sources <= 0 {
		o.Sources = 1
		if allLoopback(o.Servers) {
			o.Sources = 16
		}
	}
	return nil
}

// allLoopback reports whether every server's host is an IPv4 loopback
// address.
func allLoopback(servers []string) bool {
	for _, s := range servers {
		host, _, err := net.SplitHostPort(s)
		ip := net.ParseIP(host)
		if err != nil || ip == nil || ip.To4() == nil || !ip.IsLoopback() {
			return false
		}
	}
	return true
}

// sourceAddr is session idx's source address among n loopback ones
// (nil for the system's choice when n is 1).
func sourceAddr(idx, n int) net.IP {
	if n <= 1 {
		return nil
	}
	return net.IPv4(127, 0, 0, byte(2+idx%n))
}

// logf writes a progress note.
func (o *LoadOptions) logf(format string, args ...any) {
	fmt.Fprintf(o.Log, format+"\n", args...)
}

// fleet is the workers holding one class's sessions.
type fleet struct {
	workers []*fleetWorker
	counts  []int // sessions each worker holds
}

// fleetWorker is one worker: a process, or a goroutine of this one.
type fleetWorker struct {
	mu   sync.Mutex // one request at a time
	in   io.WriteCloser
	dec  *json.Decoder
	cmd  *exec.Cmd  // nil in this process
	end  chan error // in this process: serveWorker's result
	once sync.Once  // of stop
}

// startFleet starts enough workers for sessions sessions, which it
// spreads evenly over them.
func startFleet(o *LoadOptions, sessions int) (*fleet, error) {
	n := max(1, (sessions+o.PerWorker-1)/o.PerWorker)
	f := &fleet{}
	for i := range n {
		w, err := startWorker(o)
		if err != nil {
			f.close()
			return nil, err
		}
		f.workers = append(f.workers, w)
		f.counts = append(f.counts, sessions/n+btoi(i < sessions%n))
	}
	return f, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// startWorker starts one worker: `Bin bench --worker`, or serveWorker on
// a goroutine.
func startWorker(o *LoadOptions) (*fleetWorker, error) {
	if o.Bin == "" {
		reqR, reqW := io.Pipe()
		repR, repW := io.Pipe()
		w := &fleetWorker{in: reqW, dec: json.NewDecoder(repR), end: make(chan error, 1)}
		go func() {
			err := serveWorker(context.Background(), reqR, repW)
			repW.CloseWithError(errors.Join(err, io.EOF))
			w.end <- err
		}()
		return w, nil
	}
	cmd := exec.Command(o.Bin, "bench", "--worker")
	cmd.Stderr = o.Log
	cmd.SysProcAttr = workerProcAttr()
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("bench: worker: %w", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("bench: worker: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("bench: start worker %s: %w", o.Bin, err)
	}
	return &fleetWorker{in: in, dec: json.NewDecoder(out), cmd: cmd}, nil
}

// call sends req to w and returns its reply; a reply with Err is an error.
func (w *fleetWorker) call(req workerRequest) (workerReply, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var rep workerReply
	b, err := json.Marshal(req)
	if err != nil {
		return rep, fmt.Errorf("bench: worker request: %w", err)
	}
	if _, err := w.in.Write(append(b, '\n')); err != nil {
		return rep, fmt.Errorf("bench: worker %s: %w", req.Op, err)
	}
	if err := w.dec.Decode(&rep); err != nil {
		return rep, fmt.Errorf("bench: worker %s: %w", req.Op, err)
	}
	if rep.Err != "" {
		return rep, fmt.Errorf("bench: worker %s: %s", req.Op, rep.Err)
	}
	return rep, nil
}

// stop ends the worker: its input closes, it drops its sessions and
// exits (a process that does not within 10 s is killed).
func (w *fleetWorker) stop() {
	w.in.Close()
	if w.cmd == nil {
		<-w.end
		return
	}
	exited := make(chan struct{})
	go func() { _ = w.cmd.Wait(); close(exited) }()
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		_ = w.cmd.Process.Kill()
		<-exited
	}
}

// all sends every worker the request req(i) at once and returns their
// replies; ctx ending stops the fleet, which fails the calls.
func (f *fleet) all(ctx context.Context, req func(i int) workerRequest) ([]workerReply, error) {
	stop := context.AfterFunc(ctx, f.close)
	defer stop()
	reps := make([]workerReply, len(f.workers))
	errs := make([]error, len(f.workers))
	var wg sync.WaitGroup
	for i, w := range f.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reps[i], errs[i] = w.call(req(i))
		}()
	}
	wg.Wait()
	return reps, errors.Join(errs...)
}

// each sends every worker the same request.
func (f *fleet) each(ctx context.Context, op string) ([]workerReply, error) {
	return f.all(ctx, func(int) workerRequest { return workerRequest{Op: op} })
}

// openSpec is what open asks of every session.
type openSpec struct {
	resume     bool
	ephemerals string // create an ephemeral per session under it
	watch      string // herd: the znode re-read on its change
}

// open connects every worker's share of the sessions, all workers at
// once; it returns when the last session opened, measured from the call.
func (f *fleet) open(ctx context.Context, o *LoadOptions, spec openSpec) (time.Duration, error) {
	start := wallNanos()
	first := 0
	firsts := make([]int, len(f.workers))
	for i, n := range f.counts {
		firsts[i] = first
		first += n
	}
	reps, err := f.all(ctx, func(i int) workerRequest {
		return workerRequest{Op: "open", Servers: o.Servers, First: firsts[i], Count: f.counts[i],
			TimeoutMs: int(o.SessionTimeout / time.Millisecond), Resume: spec.resume, Concurrency: o.Concurrency, Sources: o.Sources,
			Ephemerals: spec.ephemerals, Watch: spec.watch}
	})
	if err != nil {
		return 0, err
	}
	last := start
	for _, r := range reps {
		last = max(last, r.OpenedAt)
	}
	return time.Duration(last - start), nil
}

// status sums the workers' session counts.
func (f *fleet) status(ctx context.Context, op string) (sessionCounts, error) {
	var n sessionCounts
	reps, err := f.each(ctx, op)
	for _, r := range reps {
		n.merge(r.Sessions)
	}
	return n, err
}

// cpu sums the CPU time of the workers' processes in their replies
// (once for workers that run in this process).
func (f *fleet) cpu(reps []workerReply) time.Duration {
	var sum time.Duration
	self := false
	for i, r := range reps {
		if f.workers[i].cmd == nil {
			if self {
				continue
			}
			self = true
		}
		sum += time.Duration(r.CPU)
	}
	return sum
}

// sessions is how many sessions the fleet holds.
func (f *fleet) sessions() int {
	n := 0
	for _, c := range f.counts {
		n += c
	}
	return n
}

// closeSessions closes every session with closeSession.
func (f *fleet) closeSessions(ctx context.Context) error {
	_, err := f.all(ctx, func(int) workerRequest { return workerRequest{Op: "close", WaitMs: 5000} })
	return err
}

// close stops every worker; it may be called more than once.
func (f *fleet) close() {
	var wg sync.WaitGroup
	for _, w := range f.workers {
		wg.Add(1)
		go func() { defer wg.Done(); w.stopOnce() }()
	}
	wg.Wait()
}

// stopOnce is stop, once.
func (w *fleetWorker) stopOnce() { w.once.Do(w.stop) }
