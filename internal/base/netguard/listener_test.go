package netguard

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// fakeListener hands out what its test queues: an error or a connection
// per Accept, and blocks when the queue is empty until it is closed.
type fakeListener struct {
	next   chan any // error or net.Conn
	closed chan struct{}
	once   sync.Once
}

func newFakeListener() *fakeListener {
	return &fakeListener{next: make(chan any, 1024), closed: make(chan struct{})}
}

func (f *fakeListener) Accept() (net.Conn, error) {
	select {
	case v := <-f.next:
		if err, ok := v.(error); ok {
			return nil, err
		}
		return v.(net.Conn), nil
	case <-f.closed:
		return nil, net.ErrClosed
	}
}

func (f *fakeListener) Close() error {
	f.once.Do(func() { close(f.closed) })
	return nil
}

func (f *fakeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 2181} }

// acceptErr is an accept that failed with errno, as the net package
// reports it.
func acceptErr(errno syscall.Errno) error {
	return &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", errno)}
}

// fakeConn is a connection from ip that counts its closes.
type fakeConn struct {
	net.Conn // nil: only the methods below are called
	ip       string
	mu       sync.Mutex
	closes   int
}

func newFakeConn(ip string) *fakeConn { return &fakeConn{ip: ip} }

func (c *fakeConn) RemoteAddr() net.Addr { return &net.TCPAddr{IP: net.ParseIP(c.ip), Port: 40000} }

func (c *fakeConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closes++
	return nil
}

func (c *fakeConn) closeCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closes
}

// observed is a logger whose lines the test reads.
func observed() (*zap.Logger, *observer.ObservedLogs) {
	core, logs := observer.New(zapcore.DebugLevel)
	return zap.New(core), logs
}

// acceptAsync runs one Accept in the background.
func acceptAsync(l *Listener) <-chan net.Conn {
	ch := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			close(ch)
			return
		}
		ch <- c
	}()
	return ch
}

func mustAccept(t *testing.T, ch <-chan net.Conn) net.Conn {
	t.Helper()
	select {
	case c, ok := <-ch:
		if !ok {
			t.Fatal("Accept returned an error")
		}
		return c
	case <-time.After(5 * time.Second):
		t.Fatal("Accept did not return")
	}
	return nil
}

// TestAcceptRetriesErrors: EMFILE, ENFILE, ECONNABORTED and ENOBUFS do not
// end Accept: it pauses (5 ms doubling), counts each as a rejection, logs
// once, and returns the connection that comes next.
func TestAcceptRetriesErrors(t *testing.T) {
	fl := newFakeListener()
	log, logs := observed()
	var rej Rejections
	l := Wrap(fl, Config{Name: "client", Logger: log, Rejected: &rej, LogInterval: time.Hour})
	var slept []time.Duration
	l.sleep = func(d time.Duration) bool { slept = append(slept, d); return true }
	for _, e := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ECONNABORTED, syscall.ENOBUFS} {
		fl.next <- acceptErr(e)
	}
	want := newFakeConn("10.0.0.1")
	fl.next <- want
	c, err := l.Accept()
	if err != nil {
		t.Fatalf("Accept: %v", err)
	}
	if c != want {
		t.Fatalf("Accept returned %v, want the queued connection", c)
	}
	if got := rej.Total(); got != 4 {
		t.Errorf("rejections = %d, want 4", got)
	}
	if got := rej.ByListener()["client"]; got != 4 {
		t.Errorf("rejections of client = %d, want 4", got)
	}
	wantSlept := []time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond}
	if fmt.Sprint(slept) != fmt.Sprint(wantSlept) {
		t.Errorf("pauses %v, want %v", slept, wantSlept)
	}
	if n := logs.FilterMessageSnippet("accepting a connection failed").Len(); n != 1 {
		t.Errorf("%d log lines about accept errors, want 1 (once per interval)", n)
	}
}

// TestAcceptBackoffCapped: the pause doubles up to MaxBackoff and starts
// over after a connection.
func TestAcceptBackoffCapped(t *testing.T) {
	fl := newFakeListener()
	l := Wrap(fl, Config{Name: "member"})
	var slept []time.Duration
	l.sleep = func(d time.Duration) bool { slept = append(slept, d); return true }
	for range 10 {
		fl.next <- acceptErr(syscall.EMFILE)
	}
	fl.next <- newFakeConn("10.0.0.1")
	fl.next <- acceptErr(syscall.EMFILE)
	fl.next <- newFakeConn("10.0.0.1")
	for range 2 {
		if _, err := l.Accept(); err != nil {
			t.Fatal(err)
		}
	}
	want := []time.Duration{5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000, 5}
	for i := range want {
		want[i] *= time.Millisecond
	}
	if fmt.Sprint(slept) != fmt.Sprint(want) {
		t.Errorf("pauses %v, want %v", slept, want)
	}
}

// TestCloseEndsBackoff: Close wakes an Accept pausing after an error, and
// Accept reports the close.
func TestCloseEndsBackoff(t *testing.T) {
	fl := newFakeListener()
	l := Wrap(fl, Config{Name: "admin", MinBackoff: time.Hour, MaxBackoff: time.Hour})
	fl.next <- acceptErr(syscall.EMFILE)
	done := make(chan error, 1)
	go func() {
		_, err := l.Accept()
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	l.Close()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("Accept after Close: %v, want net.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Accept still pausing after Close")
	}
}

// TestPerIPCap: beyond MaxConnsPerIP from one address a connection is
// closed at once and counted; other addresses are admitted.
func TestPerIPCap(t *testing.T) {
	fl := newFakeListener()
	log, logs := observed()
	var rej Rejections
	l := Wrap(fl, Config{Name: "admin", Limits: Limits{MaxConnsPerIP: 2}, Logger: log, Rejected: &rej, LogInterval: time.Hour})
	a1, a2, a3, a4, b1 := newFakeConn("10.0.0.1"), newFakeConn("10.0.0.1"), newFakeConn("10.0.0.1"), newFakeConn("10.0.0.1"), newFakeConn("10.0.0.2")
	for _, c := range []net.Conn{a1, a2, a3, a4, b1} {
		fl.next <- c
	}
	for range 3 {
		if _, err := l.Accept(); err != nil {
			t.Fatal(err)
		}
	}
	if a3.closeCount() != 1 || a4.closeCount() != 1 {
		t.Errorf("the third and fourth connections from one address were closed %d and %d times, want once each", a3.closeCount(), a4.closeCount())
	}
	if a1.closeCount()+a2.closeCount()+b1.closeCount() != 0 {
		t.Error("an admitted connection was closed")
	}
	if got := rej.Total(); got != 2 {
		t.Errorf("rejections = %d, want 2", got)
	}
	if got := l.Live(); got != 3 {
		t.Errorf("live = %d, want 3", got)
	}
	if n := logs.FilterMessageSnippet("too many connections from one address").Len(); n != 1 {
		t.Errorf("%d log lines about refusals, want 1 (once per interval)", n)
	}
}

// TestGlobalCap: beyond MaxConns a connection is refused whatever its
// address, and a place freed by Close is taken again.
func TestGlobalCap(t *testing.T) {
	fl := newFakeListener()
	var rej Rejections
	l := Wrap(fl, Config{Name: "metrics", Limits: Limits{MaxConns: 2}, Rejected: &rej})
	fl.next <- newFakeConn("10.0.0.1")
	fl.next <- newFakeConn("10.0.0.2")
	first := mustAccept(t, acceptAsync(l))
	mustAccept(t, acceptAsync(l))
	over := newFakeConn("10.0.0.3")
	fl.next <- over
	pending := acceptAsync(l)
	deadline := time.Now().Add(5 * time.Second)
	for over.closeCount() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("a connection beyond MaxConns was not closed")
		}
		time.Sleep(time.Millisecond)
	}
	if rej.Total() != 1 {
		t.Errorf("rejections = %d, want 1", rej.Total())
	}
	first.Close()
	next := newFakeConn("10.0.0.3")
	fl.next <- next
	if c := mustAccept(t, pending); c.RemoteAddr().String() != next.RemoteAddr().String() {
		t.Errorf("admitted %v, want the connection after the freed place", c.RemoteAddr())
	}
}

// TestSlotFreedOnceOnClose: closing an admitted connection twice frees one
// place, not two.
func TestSlotFreedOnceOnClose(t *testing.T) {
	fl := newFakeListener()
	l := Wrap(fl, Config{Name: "member", Limits: Limits{MaxConns: 2, MaxConnsPerIP: 2}})
	fl.next <- newFakeConn("10.0.0.1")
	fl.next <- newFakeConn("10.0.0.1")
	a := mustAccept(t, acceptAsync(l))
	mustAccept(t, acceptAsync(l))
	if l.Live() != 2 {
		t.Fatalf("live = %d, want 2", l.Live())
	}
	a.Close()
	a.Close()
	if l.Live() != 1 {
		t.Errorf("live = %d after closing one connection twice, want 1", l.Live())
	}
	// One place from 10.0.0.1 is free again, and only one.
	third, fourth := newFakeConn("10.0.0.1"), newFakeConn("10.0.0.1")
	fl.next <- third
	fl.next <- fourth
	mustAccept(t, acceptAsync(l))
	pending := acceptAsync(l) // refuses the fourth, then waits
	defer l.Close()
	deadline := time.Now().Add(5 * time.Second)
	for fourth.closeCount() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if third.closeCount() != 0 || fourth.closeCount() != 1 {
		t.Errorf("closes: third %d, fourth %d; want 0 and 1", third.closeCount(), fourth.closeCount())
	}
	select {
	case c, ok := <-pending:
		if ok {
			t.Errorf("admitted %v beyond the cap", c.RemoteAddr())
		}
	default:
	}
}

// TestNoLimitsNoWrapper: without caps the connection comes back as it
// was accepted.
func TestNoLimitsNoWrapper(t *testing.T) {
	fl := newFakeListener()
	l := Wrap(fl, Config{Name: "client"})
	c := newFakeConn("10.0.0.1")
	fl.next <- c
	if got := mustAccept(t, acceptAsync(l)); got != c {
		t.Errorf("got %T, want the connection itself", got)
	}
}

// TestWrappedKeepsSyscallConn: an admitted TCP connection still has
// syscall.Conn (the client port's readers need the raw socket).
func TestWrappedKeepsSyscallConn(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := Wrap(ln, Config{Name: "client", Limits: Limits{MaxConns: 10}})
	defer l.Close()
	dialed, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer dialed.Close()
	c := mustAccept(t, acceptAsync(l))
	defer c.Close()
	sc, ok := c.(syscall.Conn)
	if !ok {
		t.Fatalf("%T lost syscall.Conn", c)
	}
	if _, err := sc.SyscallConn(); err != nil {
		t.Errorf("SyscallConn: %v", err)
	}
	if _, ok := c.(interface{ CloseWrite() error }); !ok {
		t.Errorf("%T lost CloseWrite", c)
	}
}

// TestRateLogOncePerInterval: the first event is logged, the next ones
// within the interval are counted, and the line after it reports them.
func TestRateLogOncePerInterval(t *testing.T) {
	now := time.Unix(1000, 0)
	r := &RateLog{Interval: 10 * time.Second, now: func() time.Time { return now }}
	if ok, n := r.Allow(); !ok || n != 0 {
		t.Fatalf("first event: %v, %d; want logged, 0 left out", ok, n)
	}
	for i := range 1000 {
		now = now.Add(time.Millisecond)
		if ok, _ := r.Allow(); ok {
			t.Fatalf("event %d within the interval was logged", i)
		}
	}
	now = now.Add(10 * time.Second)
	if ok, n := r.Allow(); !ok || n != 1000 {
		t.Fatalf("after the interval: %v, %d; want logged, 1000 left out", ok, n)
	}
	now = now.Add(time.Second)
	if ok, _ := r.Allow(); ok {
		t.Fatal("logged again within the interval")
	}
	var nilLog *RateLog
	if ok, _ := nilLog.Allow(); ok {
		t.Fatal("a nil RateLog logged")
	}
}

// TestRejectionsNil: a nil *Rejections counts nothing and does not panic.
func TestRejectionsNil(t *testing.T) {
	var r *Rejections
	r.Add("client")
	if r.Total() != 0 || r.ByListener() != nil {
		t.Fatal("a nil Rejections counted")
	}
}
