package soak

import (
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// opKind is what an operation of the workload does.
type opKind uint8

const (
	opRead      opKind = iota + 1 // getData, answered from the member's tree (may be stale)
	opSyncRead                    // sync, then getData on the same session: linearizable
	opSet                         // setData, version -1
	opCAS                         // setData with an expected version
	opCreate                      // create the register's znode
	opDelete                      // delete it, version -1 or expected
	opSeqCreate                   // create a persistent sequential znode with a unique prefix
)

var opNames = map[opKind]string{opRead: "read", opSyncRead: "sync-read", opSet: "set", opCAS: "cas",
	opCreate: "create", opDelete: "delete", opSeqCreate: "seq-create"}

func (k opKind) String() string { return opNames[k] }

// outcome is how an operation ended, as its client saw it.
type outcome uint8

const (
	outOK      outcome = iota + 1
	outFail            // a definite error from the server (NoNode, NodeExists, BadVersion): no effect
	outNotSent         // never left the client (go-zookeeper's ErrNoServer): no effect
	outUnknown         // the connection or session was lost mid-operation: may or may not take effect
)

var outcomeNames = map[outcome]string{outOK: "ok", outFail: "failed", outNotSent: "not sent", outUnknown: "unknown"}

func (o outcome) String() string { return outcomeNames[o] }

// op is one operation of the history.
type op struct {
	client  int
	session int64 // the session it ran on, if the same at invocation and response; else 0
	kind    opKind
	key     string // the register's path; for seq-create the parent
	value   string // written value; for seq-create the unique prefix
	version int32  // expected version (cas, delete); -1 for none
	call    int64  // invocation, ns since the workload started
	ret     int64  // response
	out     outcome
	err     error   // the error, if any
	exists  bool    // reads: the znode was there
	data    string  // reads: its data
	stat    zk.Stat // reads, set, cas: the Stat returned
	path    string  // seq-create: the path created
	hung    bool    // the watchdog closed the connection to end it
}

// workloadConfig shapes the workload.
type workloadConfig struct {
	members   [][]string    // per client, the addresses it may connect to
	slots     int           // registers in use at once
	genPeriod time.Duration // how long a generation of registers is used
	maxGen    int64         // generations there are parents for
	think     time.Duration // most a client waits between operations
	opTimeout time.Duration // an operation not answered by then is ended by closing its connection
	seed      int64
}

// workload is several go-zookeeper clients doing random operations on a
// few registers (znodes) and sequential creates, recording each one. The
// registers change every genPeriod (Jepsen's independent keys): the
// checker then searches many short histories instead of one long one, and
// a write of unknown outcome stays open only in its own.
type workload struct {
	cfg   workloadConfig
	start time.Time
	gen   atomic.Int64
	stop  atomic.Bool
	done  chan struct{}
	wg    sync.WaitGroup

	mu  sync.Mutex
	ops []*op // guarded by mu
}

// regPath is the path of register slot in generation gen.
func regPath(gen int64, slot int) string { return fmt.Sprintf("/soak/r/g%05d-k%d", gen, slot) }

// seqParent is the parent of generation gen's sequential creates.
func seqParent(gen int64) string { return fmt.Sprintf("/soak/s/g%05d", gen) }

// quietLogger drops go-zookeeper's connection chatter.
type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}

func connect(addrs []string) (*zk.Conn, error) {
	c, _, err := zk.Connect(addrs, 8*time.Second, zk.WithLogger(quietLogger{}))
	return c, err
}

// prepare creates /soak and the parents of every generation's sequential
// creates, over any member, retrying through elections.
func prepare(addrs []string, maxGen int64) error {
	c, err := connect(addrs)
	if err != nil {
		return err
	}
	defer c.Close()
	paths := []string{"/soak", "/soak/r", "/soak/s"}
	for g := int64(0); g <= maxGen; g++ {
		paths = append(paths, seqParent(g))
	}
	deadline := time.Now().Add(2 * time.Minute)
	for _, p := range paths {
		for {
			_, err := c.Create(p, nil, 0, zk.WorldACL(zk.PermAll))
			if err == nil || errors.Is(err, zk.ErrNodeExists) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("create %s: %w", p, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nil
}

// startWorkload starts one goroutine per client and the generation ticker.
func startWorkload(cfg workloadConfig) (*workload, error) {
	w := &workload{cfg: cfg, start: time.Now(), done: make(chan struct{})}
	for i, addrs := range cfg.members {
		conn, err := connect(addrs)
		if err != nil {
			w.halt()
			return nil, err
		}
		cl := &client{id: i, addrs: addrs, conn: conn, rng: rand.New(rand.NewSource(cfg.seed + int64(i))),
			versions: map[string]int32{}}
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			defer func() { cl.conn.Close() }()
			w.run(cl)
		}()
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		t := time.NewTicker(cfg.genPeriod)
		defer t.Stop()
		for {
			select {
			case <-w.done:
				return
			case <-t.C:
				if w.gen.Load() < cfg.maxGen {
					w.gen.Add(1)
				}
			}
		}
	}()
	return w, nil
}

// now is the time since the workload started, in ns.
func (w *workload) now() int64 { return int64(time.Since(w.start)) }

// halt stops the clients and waits for their last operations.
func (w *workload) halt() {
	if w.stop.CompareAndSwap(false, true) {
		close(w.done)
	}
	w.wg.Wait()
}

// history returns every operation recorded so far.
func (w *workload) history() []*op {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]*op(nil), w.ops...)
}

// client is one workload client: its connection and what it remembers of
// the registers' versions (to make its compare-and-swaps likely to match).
type client struct {
	id       int
	addrs    []string
	conn     *zk.Conn
	rng      *rand.Rand
	seq      int
	versions map[string]int32
}

func (w *workload) run(c *client) {
	for !w.stop.Load() {
		o := w.next(c)
		w.exec(c, o)
		w.mu.Lock()
		w.ops = append(w.ops, o)
		w.mu.Unlock()
		if o.hung {
			c.conn.Close()
			conn, err := connect(c.addrs)
			if err != nil {
				return
			}
			c.conn = conn
		}
		if o.out == outNotSent || o.out == outUnknown {
			time.Sleep(50 * time.Millisecond) // the member is down or cut off: do not spin
		}
		select {
		case <-w.done:
			return
		case <-time.After(time.Duration(c.rng.Int63n(int64(w.cfg.think) + 1))):
		}
	}
}

// next picks the client's next operation.
func (w *workload) next(c *client) *op {
	c.seq++
	gen := w.gen.Load()
	o := &op{client: c.id, key: regPath(gen, c.rng.Intn(w.cfg.slots)), value: fmt.Sprintf("c%d-%08d", c.id, c.seq), version: -1}
	guess := func() int32 {
		if v, ok := c.versions[o.key]; ok && c.rng.Intn(4) > 0 {
			return v
		}
		return int32(c.rng.Intn(3))
	}
	switch r := c.rng.Intn(100); {
	case r < 22:
		o.kind = opRead
	case r < 36:
		o.kind = opSyncRead
	case r < 52:
		o.kind = opSet
	case r < 68:
		o.kind, o.version = opCAS, guess()
	case r < 77:
		o.kind = opCreate
	case r < 83:
		o.kind = opDelete
		if c.rng.Intn(2) == 0 {
			o.version = guess()
		}
	default:
		o.kind, o.key = opSeqCreate, seqParent(gen)
	}
	return o
}

// exec runs o on the client's connection, closing the connection if it is
// not answered within opTimeout (go-zookeeper has no per-call timeout).
func (w *workload) exec(c *client, o *op) {
	conn := c.conn
	var fired atomic.Bool
	timer := time.AfterFunc(w.cfg.opTimeout, func() {
		fired.Store(true)
		conn.Close()
	})
	s0 := conn.SessionID()
	o.call = w.now()
	var err error
	switch o.kind {
	case opRead:
		err = o.read(conn)
	case opSyncRead:
		if _, err = conn.Sync(o.key); err == nil || errors.Is(err, zk.ErrNoNode) {
			err = o.read(conn)
		}
	case opSet, opCAS:
		var st *zk.Stat
		if st, err = conn.Set(o.key, []byte(o.value), o.version); err == nil {
			o.stat = *st
		}
	case opCreate:
		_, err = conn.Create(o.key, []byte(o.value), 0, zk.WorldACL(zk.PermAll))
	case opDelete:
		err = conn.Delete(o.key, o.version)
	case opSeqCreate:
		o.path, err = conn.Create(o.key+"/"+o.value+"-", []byte(o.value), zk.FlagSequence, zk.WorldACL(zk.PermAll))
	}
	o.ret = w.now()
	timer.Stop()
	if s1 := conn.SessionID(); s0 == s1 {
		o.session = s0
	}
	o.err = err
	o.hung = fired.Load()
	switch {
	case o.hung:
		o.out = outUnknown
	case err == nil:
		o.out = outOK
	case errors.Is(err, zk.ErrNoNode) && o.kind != opSeqCreate:
		o.out = outFail
		if o.kind == opRead || o.kind == opSyncRead {
			o.out, o.exists = outOK, false
		}
	case errors.Is(err, zk.ErrNodeExists), errors.Is(err, zk.ErrBadVersion), errors.Is(err, zk.ErrNotEmpty):
		o.out = outFail
	case errors.Is(err, zk.ErrNoServer):
		o.out = outNotSent
	default:
		o.out = outUnknown
	}
	switch {
	case o.out == outOK && (o.kind == opRead || o.kind == opSyncRead) && o.exists,
		o.out == outOK && (o.kind == opSet || o.kind == opCAS):
		c.versions[o.key] = o.stat.Version
	case o.out == outOK && o.kind == opCreate:
		c.versions[o.key] = 0
	case o.out == outOK && (o.kind == opRead || o.kind == opSyncRead || o.kind == opDelete):
		delete(c.versions, o.key)
	}
}

func (o *op) read(conn *zk.Conn) error {
	data, st, err := conn.Get(o.key)
	if err == nil {
		o.exists, o.data, o.stat = true, string(data), *st
	}
	return err
}

// describe renders o for a report.
func (o *op) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "client %d session %x %s %s", o.client, o.session, o.kind, o.key)
	switch o.kind {
	case opSet, opCAS, opCreate, opSeqCreate:
		fmt.Fprintf(&b, " value %s", o.value)
	}
	if o.version != -1 {
		fmt.Fprintf(&b, " version %d", o.version)
	}
	fmt.Fprintf(&b, " [%.3fs, %.3fs] %s", float64(o.call)/1e9, float64(o.ret)/1e9, o.out)
	if o.err != nil && o.out != outOK {
		fmt.Fprintf(&b, " (%v)", o.err)
	}
	switch {
	case (o.kind == opRead || o.kind == opSyncRead) && o.out == outOK && o.exists:
		fmt.Fprintf(&b, " -> %q version %d mzxid %#x", o.data, o.stat.Version, o.stat.Mzxid)
	case (o.kind == opRead || o.kind == opSyncRead) && o.out == outOK:
		b.WriteString(" -> no node")
	case o.out == outOK && (o.kind == opSet || o.kind == opCAS):
		fmt.Fprintf(&b, " -> version %d mzxid %#x", o.stat.Version, o.stat.Mzxid)
	case o.out == outOK && o.kind == opSeqCreate:
		fmt.Fprintf(&b, " -> %s", o.path)
	}
	return b.String()
}
