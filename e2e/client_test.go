package e2e

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"regexp"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// Session timeouts used by the tests.
const (
	// sessionTimeout is the default for tests that do not lose connections.
	// It is generous because go-zookeeper drops a connection after 2/3 of
	// it without a reply, and a loaded machine can stall a JVM that long.
	sessionTimeout = 20 * time.Second
	// shortTimeout is for tests that wait for a session to expire.
	shortTimeout = 4 * time.Second
	// eventWait bounds the wait for a notification that must arrive.
	eventWait = 5 * time.Second
	// quiet is how long a test watches for an event that must not arrive.
	quiet = 300 * time.Millisecond
)

var openACL = zk.WorldACL(zk.PermAll)

// clientLogger returns the go-zookeeper logger: silent unless
// ZKRAFT_E2E_CLIENT_LOG=1 (its goroutines outlive tests, so it cannot use t.Logf).
func clientLogger() zk.Logger {
	if os.Getenv("ZKRAFT_E2E_CLIENT_LOG") == "1" {
		return log.New(os.Stderr, "zk-client ", log.LstdFlags|log.Lmicroseconds)
	}
	return log.New(io.Discard, "", 0)
}

// client is a go-zookeeper connection that records its session events.
type client struct {
	*zk.Conn
	dialer *dialer

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every new event
	events  []zk.Event    // every session event, in order
	seen    int           // events before this index were consumed by waitState
}

// connect opens a session on s with the given timeout and waits until it is
// established. The session is closed when t ends.
func connect(t testing.TB, s *Server, timeout time.Duration) *client {
	t.Helper()
	c := &client{dialer: &dialer{}, changed: make(chan struct{})}
	conn, events, err := zk.Connect([]string{s.Addr}, timeout,
		zk.WithLogger(clientLogger()), zk.WithDialer(c.dialer.dial), zk.WithEventCallback(c.record))
	if err != nil {
		t.Fatalf("zk.Connect: %v", err)
	}
	// go-zookeeper drops events when this channel is full; the callback
	// above is the reliable record, so just drain it.
	go func() {
		for range events {
		}
	}()
	c.Conn = conn
	t.Cleanup(conn.Close)
	c.waitState(t, zk.StateHasSession, 10*time.Second)
	return c
}

// record is go-zookeeper's event callback: it keeps session events.
func (c *client) record(ev zk.Event) {
	if ev.Type != zk.EventSession {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events = append(c.events, ev)
	close(c.changed)
	c.changed = make(chan struct{})
}

// waitState waits for a session event with state that has not been
// consumed yet, and consumes the events up to it.
func (c *client) waitState(t testing.TB, state zk.State, timeout time.Duration) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		c.mu.Lock()
		for i := c.seen; i < len(c.events); i++ {
			if c.events[i].State == state {
				c.seen = i + 1
				c.mu.Unlock()
				return
			}
		}
		changed := c.changed
		c.mu.Unlock()
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("no %v within %v (state now %v)", state, timeout, c.State())
		}
	}
}

// dialer is a go-zookeeper Dialer whose connections can be dropped and whose
// redials can be blocked, to simulate network failures.
type dialer struct {
	mu      sync.Mutex
	blocked bool
	conns   []net.Conn
	dials   atomic.Int32
}

// dial implements zk.Dialer.
func (d *dialer) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	d.dials.Add(1)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.blocked {
		time.Sleep(50 * time.Millisecond)
		return nil, errors.New("e2e: dialer blocked")
	}
	c, err := net.DialTimeout(network, addr, timeout)
	if err == nil {
		d.conns = append(d.conns, c)
	}
	return c, err
}

// drop closes every connection made so far; block decides whether redials
// fail until unblock is called.
func (d *dialer) drop(block bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.blocked = block
	for _, c := range d.conns {
		c.Close()
	}
	d.conns = nil
}

// block makes redials fail until unblock, leaving current connections be.
func (d *dialer) block() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.blocked = true
}

// unblock lets redials through again.
func (d *dialer) unblock() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.blocked = false
}

var pathSeq atomic.Int64

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// testRoot creates a fresh persistent node for t on the shared server and
// returns its path; each test works only below its own root.
func testRoot(t testing.TB, c *client) string {
	t.Helper()
	p := fmt.Sprintf("/e2e-%s-%d", unsafeName.ReplaceAllString(t.Name(), "_"), pathSeq.Add(1))
	mustCreate(t, c, p, nil, 0)
	return p
}

// mustCreate creates path and fails t on error.
func mustCreate(t testing.TB, c *client, path string, data []byte, flags int32) string {
	t.Helper()
	got, err := c.Create(path, data, flags, openACL)
	if err != nil {
		t.Fatalf("create %s (flags %d): %v", path, flags, err)
	}
	return got
}

// mustStat returns path's Stat and fails t if it does not exist.
func mustStat(t testing.TB, c *client, path string) zk.Stat {
	t.Helper()
	ok, st, err := c.Exists(path)
	if err != nil || !ok {
		t.Fatalf("exists %s: %v %v", path, ok, err)
	}
	return *st
}

// mustNotExist fails t if path exists.
func mustNotExist(t testing.TB, c *client, path string) {
	t.Helper()
	ok, _, err := c.Exists(path)
	if err != nil || ok {
		t.Fatalf("exists %s = %v, %v; want false", path, ok, err)
	}
}

// wantErr fails t unless err is want (compared with errors.Is).
func wantErr(t testing.TB, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: err = %v, want %v", what, err, want)
	}
}

// waitEvent receives one event from ch and checks its type and path.
func waitEvent(t testing.TB, ch <-chan zk.Event, typ zk.EventType, path string) {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatalf("watch channel closed, want %v %s", typ, path)
		}
		if ev.Type != typ || ev.Path != path {
			t.Fatalf("event = %v %q (err %v), want %v %q", ev.Type, ev.Path, ev.Err, typ, path)
		}
	case <-time.After(eventWait):
		t.Fatalf("no %v on %s within %v", typ, path, eventWait)
	}
}

// noEvent fails t if ch delivers anything within d.
func noEvent(t testing.TB, ch <-chan zk.Event, d time.Duration) {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if ok {
			t.Fatalf("unexpected event %v %q", ev.Type, ev.Path)
		}
	case <-time.After(d):
	}
}

// sorted returns a sorted copy of s.
func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
