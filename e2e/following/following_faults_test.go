package following

import (
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/cli/fourletter"
	"github.com/zkraft/zkraft/internal/testing/procs"
	"github.com/zkraft/zkraft/internal/testing/zktest"
)

// sessionEvents connects a client to addrs and returns it with its
// session events; the returned wait function waits for want and fails t
// on an expired session.
func sessionEvents(t *testing.T, addrs ...string) (*zk.Conn, func(want zk.State)) {
	t.Helper()
	c, ev, err := zk.Connect(addrs, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	// wait returns once the client is in state want, or has been since
	// the last wait. The client's own state is polled as well as its
	// events: go-zookeeper drops events when its channel (6) is full, and
	// several reconnections in a row, as while an observer resyncs on a
	// loaded machine, lose the HasSession a wait on events alone needs.
	wait := func(want zk.State) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			select {
			case e := <-ev:
				if e.State == zk.StateExpired {
					t.Fatal("session expired")
				}
				if e.State == want {
					return
				}
				continue
			case <-time.After(50 * time.Millisecond):
			}
			if c.State() == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %v from %v (now %v)", want, addrs, c.State())
			}
		}
	}
	wait(zk.StateHasSession)
	return c, wait
}

// retryWrite retries write until it succeeds or 30 s pass: a write made
// while ZooKeeper elects a leader fails with a connection error.
func retryWrite(t *testing.T, what string, write func() error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := write()
		if err == nil {
			return
		}
		if errors.Is(err, zk.ErrSessionExpired) || time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestObserverSurvivesLeaderKill: ZooKeeper's leader is killed (-9) under
// a client connected only to the zkraft observer. The client keeps its
// session and its ephemeral, writes again once ZooKeeper elected another
// leader, and the watches it set before the kill fire for writes made
// after it (re-sent by SetWatches when the observer dropped it).
func TestObserverSurvivesLeaderKill(t *testing.T) {
	t.Parallel()
	e := zktest.Start(t)
	obs := procs.StartFollower(t, e, e.ObserverID)
	c, wait := sessionEvents(t, obs.ClientAddr)
	id := c.SessionID()
	if _, err := c.Create("/lk", []byte("1"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create("/lk/eph", []byte("e"), zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	_, _, dataW, err := c.GetW("/lk")
	if err != nil {
		t.Fatal(err)
	}
	_, _, childW, err := c.ChildrenW("/lk")
	if err != nil {
		t.Fatal(err)
	}
	_, _, existW, err := c.ExistsW("/lk/later")
	if err != nil {
		t.Fatal(err)
	}

	lead := e.Leader()
	e.Kill(lead)
	t.Logf("killed ZooKeeper's leader, server %d", lead.ID)
	e.Leader()
	// A write made on ZooKeeper right after the election, while the
	// observer may still be resyncing, fires the data watch.
	zc := procs.ConnectTo(t, e.ClientAddrs()...)
	retryWrite(t, "set on ZooKeeper after the new leader", func() error { _, err := zc.Set("/lk", []byte("zk"), -1); return err })
	wait(zk.StateHasSession)
	if c.SessionID() != id {
		t.Fatalf("session %#x became %#x", id, c.SessionID())
	}
	retryWrite(t, "set after the new leader", func() error { _, err := c.Set("/lk", []byte("2"), -1); return err })
	if data, _, err := c.Get("/lk"); err != nil || string(data) != "2" {
		t.Errorf("the observer reads %q, %v after its write", data, err)
	}
	retryWrite(t, "create after the new leader", func() error {
		_, err := c.Create("/lk/later", nil, 0, zk.WorldACL(zk.PermAll))
		if errors.Is(err, zk.ErrNodeExists) {
			return nil
		}
		return err
	})
	for want, w := range map[zk.EventType]<-chan zk.Event{zk.EventNodeDataChanged: dataW, zk.EventNodeChildrenChanged: childW, zk.EventNodeCreated: existW} {
		select {
		case ev := <-w:
			if ev.Type != want || ev.Err != nil {
				t.Errorf("watch event %+v, want %v", ev, want)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("the %v watch set before the kill did not fire", want)
		}
	}
	if _, err := zc.Sync("/lk/eph"); err != nil {
		t.Fatal(err)
	}
	_, st, err := zc.Get("/lk/eph")
	if err != nil || st.EphemeralOwner != id {
		t.Fatalf("the ephemeral after the kill: %+v, %v; want owner %#x", st, err, id)
	}
}

// orderedHosts is a zk.HostProvider that tries its servers in its own
// order, round robin (go-zookeeper shuffles the ones it is given).
type orderedHosts struct {
	mu      sync.Mutex
	servers []string
	next    int
	tried   int
}

func (h *orderedHosts) Init([]string) error { return nil }

func (h *orderedHosts) Len() int { return len(h.servers) }

func (h *orderedHosts) Next() (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.servers[h.next%len(h.servers)]
	h.next++
	h.tried++
	return s, h.tried > len(h.servers)
}

func (h *orderedHosts) Connected() {
	h.mu.Lock()
	h.tried = 0
	h.mu.Unlock()
}

// cuttingDialer dials what it is asked, and can cut the last connection
// so the client moves to its next server, or for good.
type cuttingDialer struct {
	mu   sync.Mutex
	nc   net.Conn
	gone bool
}

func (d *cuttingDialer) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	d.mu.Lock()
	gone := d.gone
	d.mu.Unlock()
	if gone {
		return nil, errors.New("the client is gone")
	}
	nc, err := net.DialTimeout(network, addr, timeout)
	if err == nil {
		d.mu.Lock()
		d.nc = nc
		d.mu.Unlock()
	}
	return nc, err
}

// vanish cuts the connection and fails every dial from now on.
func (d *cuttingDialer) vanish() {
	d.mu.Lock()
	d.gone = true
	d.mu.Unlock()
	d.cut()
}

func (d *cuttingDialer) cut() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.nc != nil {
		d.nc.Close()
	}
}

// waitServes waits until m answers srvr in mode.
func waitServes(t *testing.T, m *procs.Member, mode string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for m.Mode() != mode {
		if time.Now().After(deadline) {
			t.Fatalf("server %d does not serve as %s", m.ID, mode)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestObserverRestartKeepsSessions: the zkraft observer is stopped
// (SIGTERM) and started again on its data dir under a client that has
// its address and a ZooKeeper server's. The client keeps its session and
// ephemeral on ZooKeeper meanwhile; the observer resumes its saved tree,
// syncs by DIFF, serves what was written while it was down, and takes
// the session back.
func TestObserverRestartKeepsSessions(t *testing.T) {
	t.Parallel()
	e := zktest.Start(t)
	obs := procs.StartFollower(t, e, e.ObserverID)
	d := &cuttingDialer{}
	c, ev, err := zk.Connect([]string{obs.ClientAddr, e.ClientAddrs()[0]}, 10*time.Second, zk.WithLogInfo(false),
		zk.WithHostProvider(&orderedHosts{servers: []string{obs.ClientAddr, e.ClientAddrs()[0]}}), zk.WithDialer(d.dial))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	expired := make(chan struct{})
	connected := make(chan struct{}, 16)
	go func() {
		for e := range ev {
			switch e.State {
			case zk.StateExpired:
				close(expired)
				return
			case zk.StateHasSession:
				connected <- struct{}{}
			}
		}
	}()
	waitSession := func() {
		t.Helper()
		select {
		case <-connected:
		case <-expired:
			t.Fatal("session expired")
		case <-time.After(30 * time.Second):
			t.Fatal("no session")
		}
	}
	waitSession()
	id := c.SessionID()
	held := func(m string) bool { return strings.Contains(fourletter.Ask(m, "cons"), fmt.Sprintf("sid=0x%x", id)) }
	if !held(obs.ClientAddr) {
		t.Fatal("the client did not start on the observer")
	}
	if _, err := c.Create("/rs", []byte("1"), zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	obs.Stop(t)
	waitSession()
	if _, err := c.Set("/rs", []byte("2"), -1); err != nil {
		t.Fatalf("write on ZooKeeper while the observer is down: %v", err)
	}
	for i := range 20 {
		if _, err := c.Create(fmt.Sprintf("/rs-%d", i), nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	obs.Start(t)
	waitServes(t, obs, "observer")
	d.cut()
	waitSession()
	if c.SessionID() != id {
		t.Fatalf("session %#x became %#x", id, c.SessionID())
	}
	if !held(obs.ClientAddr) {
		t.Error("the session did not move back to the restarted observer")
	}
	data, st, err := c.Get("/rs")
	if err != nil || string(data) != "2" || st.EphemeralOwner != id {
		t.Fatalf("through the restarted observer: %q %+v %v", data, st, err)
	}
	if ok, _, err := c.Exists("/rs-19"); !ok || err != nil {
		t.Errorf("the restarted observer lacks a write made while it was down: %v", err)
	}
	if _, err := c.Set("/rs", []byte("3"), -1); err != nil {
		t.Fatalf("write through the restarted observer: %v", err)
	}
	log, _ := os.ReadFile(obs.LogPath)
	for _, want := range []string{"resuming from the saved tree", `"kind": "DIFF"`} {
		if !strings.Contains(string(log), want) {
			t.Errorf("the observer's log lacks %q", want)
		}
	}
}

// TestObserverSessionTimeouts: an idle client of the observer with a
// short session timeout keeps its session (the observer's pings touch it
// on ZooKeeper's leader); when it vanishes without closing its session it
// loses it and its ephemeral once the timeout passes, and when it comes
// back the observer tells it its session expired.
func TestObserverSessionTimeouts(t *testing.T) {
	t.Parallel()
	e := zktest.Start(t)
	obs := procs.StartFollower(t, e, e.ObserverID)
	d := &cuttingDialer{}
	c, ev, err := zk.Connect([]string{obs.ClientAddr}, 2*time.Second, zk.WithLogInfo(false), zk.WithDialer(d.dial))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for e := range ev {
		if e.State == zk.StateHasSession {
			break
		}
	}
	if _, err := c.Create("/idle", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	zc := procs.ConnectTo(t, e.ClientAddrs()...)
	time.Sleep(4 * time.Second) // twice the session timeout
	if _, err := zc.Sync("/idle"); err != nil {
		t.Fatal(err)
	}
	if ok, _, _ := zc.Exists("/idle"); !ok {
		t.Fatal("the ephemeral of an idle client of the observer expired")
	}
	for {
		select {
		case e := <-ev:
			if e.State == zk.StateExpired {
				t.Fatal("the idle client's session expired")
			}
			continue
		default:
		}
		break
	}

	// The client vanishes: its connection is cut and it reaches no
	// server again.
	d.vanish()
	deadline := time.Now().Add(15 * time.Second)
	for {
		if _, err := zc.Sync("/idle"); err != nil {
			t.Fatal(err)
		}
		if ok, _, _ := zc.Exists("/idle"); !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the ephemeral of a client gone from the observer outlived its session timeout")
		}
		time.Sleep(200 * time.Millisecond)
	}
	id := c.SessionID()
	if out := fourletter.Ask(obs.ClientAddr, "cons"); strings.Contains(out, fmt.Sprintf("sid=0x%x", id)) {
		t.Errorf("the observer still lists the expired session:\n%s", out)
	}

	// Back on the observer, the client is told its session expired, as
	// a ZooKeeper server tells it, and a new session works.
	d.mu.Lock()
	d.gone = false
	d.mu.Unlock()
	timeout := time.After(20 * time.Second)
	for expired := false; !expired; {
		select {
		case e := <-ev:
			if e.State == zk.StateHasSession && c.SessionID() == id {
				t.Fatalf("the observer took back session %#x that ZooKeeper expired", id)
			}
			expired = e.State == zk.StateExpired
		case <-timeout:
			t.Fatal("no StateExpired from the observer")
		}
	}
	nc := procs.ConnectTo(t, obs.ClientAddr)
	if nc.SessionID() == id {
		t.Fatal("a new session got the expired session's id")
	}
	if _, err := nc.Create("/idle", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
}

// TestObserverWritesAcrossLeaderKill: clients write through the observer
// without pause while ZooKeeper's leader is killed (-9). Every write
// returns (none hangs), each one acknowledged is on ZooKeeper after the
// election, and the writers carry on with their sessions.
func TestObserverWritesAcrossLeaderKill(t *testing.T) {
	t.Parallel()
	e := zktest.Start(t)
	obs := procs.StartFollower(t, e, e.ObserverID)
	c, _ := sessionEvents(t, obs.ClientAddr)
	if _, err := c.Create("/wk", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	const writers = 4
	stop := make(chan struct{})
	type result struct {
		acked  []string
		failed int
		err    error
	}
	results := make(chan result, writers)
	for w := range writers {
		go func() {
			var r result
			defer func() { results <- r }()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				path := fmt.Sprintf("/wk/w%d-%d", w, i)
				done := make(chan error, 1)
				go func() { _, err := c.Create(path, nil, 0, zk.WorldACL(zk.PermAll)); done <- err }()
				select {
				case err := <-done:
					switch {
					case err == nil:
						r.acked = append(r.acked, path)
					case errors.Is(err, zk.ErrSessionExpired):
						r.err = err
						return
					default:
						r.failed++
						time.Sleep(50 * time.Millisecond)
					}
				case <-time.After(30 * time.Second):
					r.err = fmt.Errorf("create %s hangs", path)
					return
				}
			}
		}()
	}
	time.Sleep(time.Second)
	lead := e.Leader()
	e.Kill(lead)
	e.Leader()
	retryWrite(t, "write after the election", func() error { _, err := c.Create("/wk-after", nil, 0, zk.WorldACL(zk.PermAll)); return err })
	time.Sleep(time.Second)
	close(stop)
	zc := procs.ConnectTo(t, e.ClientAddrs()...)
	if _, err := zc.Sync("/wk"); err != nil {
		t.Fatal(err)
	}
	kids, _, err := zc.Children("/wk")
	if err != nil {
		t.Fatal(err)
	}
	on := make(map[string]bool, len(kids))
	for _, k := range kids {
		on["/wk/"+k] = true
	}
	total, failed := 0, 0
	for range writers {
		r := <-results
		if r.err != nil {
			t.Error(r.err)
		}
		failed += r.failed
		total += len(r.acked)
		for _, p := range r.acked {
			if !on[p] {
				t.Errorf("acknowledged write %s is not on ZooKeeper", p)
			}
		}
	}
	t.Logf("%d writes acknowledged, %d failed across the kill; %d znodes on ZooKeeper", total, failed, len(kids))
}

// TestObserverAcrossQuorumLoss: two of ZooKeeper's three servers are
// killed, so the ensemble has no leader. The observer stops serving (as
// ZooKeeper's observers do: no session can be kept or written without a
// leader); once one server is back and a leader elected, the client
// reconnects to the observer with its session, ephemeral and watch.
func TestObserverAcrossQuorumLoss(t *testing.T) {
	t.Parallel()
	e := zktest.Start(t)
	obs := procs.StartFollower(t, e, e.ObserverID)
	c, ev, err := zk.Connect([]string{obs.ClientAddr}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	states := make(chan zk.State, 64)
	go func() {
		for e := range ev {
			states <- e.State
		}
	}()
	// waitState returns once the client has been in state want: by its
	// events, or by its state polled, since a long outage's reconnection
	// attempts can fill states and go-zookeeper then drops events.
	waitState := func(want zk.State) {
		t.Helper()
		deadline := time.After(30 * time.Second)
		poll := time.NewTicker(100 * time.Millisecond)
		defer poll.Stop()
		for {
			select {
			case s := <-states:
				if s == zk.StateExpired {
					t.Fatal("session expired")
				}
				if s == want {
					return
				}
			case <-poll.C:
				if c.State() == want {
					return
				}
			case <-deadline:
				t.Fatalf("no %v", want)
			}
		}
	}
	waitState(zk.StateHasSession)
	id := c.SessionID()
	if _, err := c.Create("/ql", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	_, _, w, err := c.GetW("/ql")
	if err != nil {
		t.Fatal(err)
	}
	lead := e.Leader()
	var other *zktest.Server
	for _, s := range e.Servers {
		if s != lead && other == nil {
			other = s
		}
	}
	e.Kill(lead)
	e.Kill(other)
	waitState(zk.StateDisconnected)
	deadline := time.Now().Add(10 * time.Second)
	for {
		mode := obs.Mode()
		if mode != "observer" {
			// ZooKeeper's answer when it does not serve.
			for _, w := range []string{"srvr", "stat", "mntr", "cons"} {
				if out, _ := procs.FourLetter(obs.ClientAddr, w); !strings.Contains(out, "not currently serving requests") {
					t.Errorf("%s on the observer without a leader: %q", w, out)
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the observer says it serves without ZooKeeper's leader")
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(2 * time.Second)
	e.Restart(other)
	e.Leader()
	waitState(zk.StateHasSession)
	if c.SessionID() != id {
		t.Fatalf("session %#x became %#x", id, c.SessionID())
	}
	retryWrite(t, "set after quorum is back", func() error { _, err := c.Set("/ql", []byte("back"), -1); return err })
	select {
	case ev := <-w:
		if ev.Type != zk.EventNodeDataChanged {
			t.Errorf("watch event %+v", ev)
		}
	case <-time.After(10 * time.Second):
		t.Error("the watch set before the quorum loss did not fire")
	}
	_, st, err := c.Get("/ql")
	if err != nil || st.EphemeralOwner != id {
		t.Errorf("the ephemeral after the quorum loss: %+v %v", st, err)
	}
}

// TestObserverKilledResumesStaleState: the observer saves its tree on a
// SIGTERM, runs on, is killed (-9) with no save, and starts again from
// the older tree while ZooKeeper took more writes: it catches up and
// reads what ZooKeeper holds.
func TestObserverKilledResumesStaleState(t *testing.T) {
	t.Parallel()
	e := zktest.Start(t)
	obs := procs.StartFollower(t, e, e.ObserverID)
	zc := procs.ConnectTo(t, e.ClientAddrs()...)
	write := func(prefix string, n int) {
		t.Helper()
		for i := range n {
			if _, err := zc.Create(fmt.Sprintf("/%s-%d", prefix, i), []byte(prefix), 0, zk.WorldACL(zk.PermAll)); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("a", 10)
	obs.Stop(t)
	obs.Start(t)
	waitServes(t, obs, "observer")
	write("b", 10)
	if err := zc.Delete("/a-3", -1); err != nil {
		t.Fatal(err)
	}
	oc := procs.ConnectTo(t, obs.ClientAddr)
	if _, err := oc.Sync("/"); err != nil {
		t.Fatal(err)
	}
	oc.Close()
	obs.Kill()
	for syscall.Kill(obs.Cmd.Process.Pid, 0) == nil {
		time.Sleep(50 * time.Millisecond)
	}
	write("c", 10)
	obs.Start(t)
	waitServes(t, obs, "observer")
	oc = procs.ConnectTo(t, obs.ClientAddr)
	if _, err := oc.Sync("/"); err != nil {
		t.Fatal(err)
	}
	got, _, err := oc.Children("/")
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := zc.Children("/")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("after the kill the observer has %v; ZooKeeper %v", got, want)
	}
	if z, o := e.LastZxid(e.Leader()), fourletter.Field(fourletter.Ask(obs.ClientAddr, "srvr"), "Zxid: "); o != fmt.Sprintf("0x%x", z) {
		t.Errorf("the observer is at zxid %s, ZooKeeper's leader at %#x", o, z)
	}
	if log, _ := os.ReadFile(obs.LogPath); strings.Count(string(log), "resuming from the saved tree") != 2 {
		t.Errorf("the observer did not resume its saved tree on both restarts:\n%s", log)
	}
}
