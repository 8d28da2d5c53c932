package bench

import (
	"math"
	"sync"
	"sync/atomic"

	"github.com/zkraft/zkraft/jute"
)

// opClass names what a latency sample measures; each class is a row of the
// final table.
type opClass uint8

// Classes of measured operations. classNone is never reported (setup,
// barriers, cleanup).
const (
	classNone opClass = iota
	classGet
	classSet
	classCreate
	classDelete
	classConnect
	classClose
	classCycle  // ephemeral churn: connect + creates + close
	classEvent  // watch fan-out: setData sent → one watcher notified
	classFanout // watch fan-out: setData sent → every watcher notified
	classArm    // watch fan-out: getData with watch
	numClasses
)

var classNames = [numClasses]string{
	classNone: "-", classGet: "getData", classSet: "setData", classCreate: "create",
	classDelete: "delete", classConnect: "connect", classClose: "closeSession",
	classCycle: "session-cycle", classEvent: "watch-event", classFanout: "fanout-round",
	classArm: "watch-arm",
}

// String is the class name used in tables and JSON.
func (c opClass) String() string {
	if c < numClasses {
		return classNames[c]
	}
	return "?"
}

// window is the measurement interval in nanoseconds since the run's epoch
// (monotonic). Before measurement starts, start is MaxInt64 so nothing counts.
type window struct {
	start atomic.Int64
	end   atomic.Int64
}

func newWindow() *window {
	w := &window{}
	w.start.Store(math.MaxInt64)
	w.end.Store(math.MaxInt64)
	return w
}

// in reports whether a request sent at t belongs to the measurement.
func (w *window) in(t int64) bool { return t >= w.start.Load() && t < w.end.Load() }

// recorder collects one worker's samples. Histograms and counters are atomic
// so the live progress can read them while the worker's reader goroutine
// writes; the error table is behind mu (errors are rare).
type recorder struct {
	win   *window
	hists [numClasses]atomic.Pointer[Histogram] // allocated on first use: most workers use one or two classes
	ops   [numClasses]atomic.Int64
	nerr  atomic.Int64
	live  atomic.Int64 // replies of any class, warm-up included (progress only)

	mu   sync.Mutex
	errs map[errKey]int64 // guarded by mu
}

// errKey is one cell of the error table: an operation class and either a
// ZooKeeper error code or a client-side failure name.
type errKey struct {
	class opClass
	code  jute.ErrCode
	what  string // client-side failure ("timeout", "connection"); empty for server codes
}

func newRecorder(win *window) *recorder {
	return &recorder{win: win, errs: make(map[errKey]int64)}
}

// done records a request of class c sent at start and answered at now with
// code err, if it was sent inside the measurement window.
func (r *recorder) done(c opClass, start, now int64, err jute.ErrCode) {
	if c == classNone {
		return
	}
	r.live.Add(1)
	if !r.win.in(start) {
		return
	}
	if err != jute.OK {
		r.fail(c, err, "")
		return
	}
	r.hist(c).Record(now - start)
	r.ops[c].Add(1)
}

// hist returns class c's histogram, allocating it on first use.
func (r *recorder) hist(c opClass) *Histogram {
	if h := r.hists[c].Load(); h != nil {
		return h
	}
	r.hists[c].CompareAndSwap(nil, new(Histogram))
	return r.hists[c].Load()
}

// snapshot adds class c's samples to s (nothing if none were recorded).
func (r *recorder) snapshot(c opClass, s *HistSnapshot) {
	if h := r.hists[c].Load(); h != nil {
		h.Snapshot(s)
	}
}

// sample records a latency measured by the workload itself (not a single
// request), if start is inside the window.
func (r *recorder) sample(c opClass, start, now int64) { r.done(c, start, now, jute.OK) }

// fail counts an error for class c: a server code, or a client-side failure
// named by what.
func (r *recorder) fail(c opClass, code jute.ErrCode, what string) {
	r.nerr.Add(1)
	r.mu.Lock()
	r.errs[errKey{c, code, what}]++
	r.mu.Unlock()
}

// failIn is fail restricted to requests sent inside the window.
func (r *recorder) failIn(c opClass, start int64, code jute.ErrCode, what string) {
	if c != classNone && r.win.in(start) {
		r.fail(c, code, what)
	}
}
