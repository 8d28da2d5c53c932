package main

import (
	"fmt"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// quiet drops the ZooKeeper client's log lines.
type quiet struct{}

func (quiet) Printf(string, ...interface{}) {}

// writer is one session writing steadily, one setData in flight at a
// time: the client whose longest wait between two replies (its stall) is
// recorded per phase of the run. A gap counts in the phase its reply
// lands in.
type writer struct {
	conn *zk.Conn
	mu   sync.Mutex
	cur  string
	max  map[string]time.Duration
	ops  map[string]int
	errs map[string]int
	last time.Time
	done chan struct{}
	wg   sync.WaitGroup
}

// startWriter connects to addr and starts writing /scale-writer.
func startWriter(addr string) (*writer, error) {
	c, _, err := zk.Connect([]string{addr}, 40*time.Second, zk.WithLogger(quiet{}))
	if err != nil {
		return nil, fmt.Errorf("writer: %w", err)
	}
	if _, err := c.Create("/scale-writer", nil, 0, zk.WorldACL(zk.PermAll)); err != nil && err != zk.ErrNodeExists {
		c.Close()
		return nil, fmt.Errorf("writer: %w", err)
	}
	w := &writer{conn: c, cur: "start", max: map[string]time.Duration{}, ops: map[string]int{}, errs: map[string]int{},
		last: time.Now(), done: make(chan struct{})}
	w.wg.Add(1)
	go w.loop()
	return w, nil
}

func (w *writer) loop() {
	defer w.wg.Done()
	data := make([]byte, 100)
	for {
		select {
		case <-w.done:
			return
		default:
		}
		_, err := w.conn.Set("/scale-writer", data, -1)
		now := time.Now()
		w.mu.Lock()
		if err != nil {
			w.errs[w.cur]++
		} else {
			w.ops[w.cur]++
			w.max[w.cur] = max(w.max[w.cur], now.Sub(w.last))
			w.last = now
		}
		w.mu.Unlock()
		if err != nil {
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// phase starts the phase named name.
func (w *writer) phase(name string) {
	w.mu.Lock()
	w.cur = name
	w.mu.Unlock()
}

// stall is the longest gap between replies in phase name, with the
// writes and errors seen in it.
func (w *writer) stall(name string) (longest time.Duration, ops, errs int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.max[name], w.ops[name], w.errs[name]
}

// stop ends the writes and closes the session.
func (w *writer) stop() {
	close(w.done)
	w.wg.Wait()
	w.conn.Close()
}
