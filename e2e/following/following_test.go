package following

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/testing/procs"
	"github.com/zkraft/zkraft/internal/testing/zktest"
)

// TestServeFollowingZooKeeper: a zkraft server following a ZooKeeper 3.8
// ensemble as its Observer serves a client as a ZooKeeper observer
// would: reads with ZooKeeper's Stats, writes and multis forwarded with
// ZooKeeper's answers, watches fired by writes made on ZooKeeper, sync,
// and a session that moves from ZooKeeper to zkraft and back.
func TestServeFollowingZooKeeper(t *testing.T) {
	t.Parallel()
	e := zktest.Start(t)
	obs := procs.StartFollower(t, e, e.ObserverID)
	zc := procs.ConnectTo(t, e.ClientAddrs()...)
	oc := procs.ConnectTo(t, obs.ClientAddr)

	// Writes through the observer, read on ZooKeeper: equal Stats.
	if _, err := oc.Create("/mig", []byte("a"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	seq, err := oc.Create("/mig/s-", []byte("e"), zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil || !strings.HasPrefix(seq, "/mig/s-000000000") {
		t.Fatalf("sequential ephemeral through the observer: %q, %v", seq, err)
	}
	st, err := oc.Set("/mig", []byte("b"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zc.Sync("/mig"); err != nil {
		t.Fatal(err)
	}
	data, zst, err := zc.Get("/mig")
	if err != nil || string(data) != "b" || *zst != *st {
		t.Fatalf("ZooKeeper reads %q %+v (%v); the observer answered %+v", data, zst, err, st)
	}
	_, est, err := zc.Get(seq)
	if err != nil || est.EphemeralOwner != oc.SessionID() {
		t.Fatalf("the ephemeral's owner on ZooKeeper: %+v, %v; want session %#x", est, err, oc.SessionID())
	}
	// ZooKeeper's errors come back as ZooKeeper's.
	if _, err := oc.Set("/mig", []byte("c"), 0); !errors.Is(err, zk.ErrBadVersion) {
		t.Errorf("set with a stale version through the observer: %v", err)
	}
	if _, err := oc.Create("/mig", nil, 0, zk.WorldACL(zk.PermAll)); !errors.Is(err, zk.ErrNodeExists) {
		t.Errorf("create of an existing node: %v", err)
	}
	// A multi, then a failing one.
	res, err := oc.Multi(&zk.CreateRequest{Path: "/mig/m", Data: []byte("m"), Acl: zk.WorldACL(zk.PermAll)},
		&zk.CheckVersionRequest{Path: "/mig", Version: 1},
		&zk.SetDataRequest{Path: "/mig/m", Data: []byte("n"), Version: 0},
		&zk.DeleteRequest{Path: "/mig/m", Version: 1})
	if err != nil || len(res) != 4 || res[0].String != "/mig/m" || res[2].Stat == nil || res[2].Stat.Version != 1 {
		t.Fatalf("multi through the observer: %+v, %v", res, err)
	}
	res, err = oc.Multi(&zk.CreateRequest{Path: "/mig/n", Acl: zk.WorldACL(zk.PermAll)},
		&zk.CheckVersionRequest{Path: "/mig", Version: 7})
	if !errors.Is(err, zk.ErrBadVersion) || len(res) != 2 || !errors.Is(res[1].Error, zk.ErrBadVersion) {
		t.Fatalf("failing multi through the observer: %+v, %v", res, err)
	}
	if ok, _, _ := zc.Exists("/mig/n"); ok {
		t.Error("a failed multi's create is on ZooKeeper")
	}

	// A watch set on the observer fires for a write made on ZooKeeper.
	_, _, w, err := oc.GetW("/mig")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zc.Set("/mig", []byte("from zk"), -1); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-w:
		if ev.Type != zk.EventNodeDataChanged || ev.Path != "/mig" {
			t.Errorf("watch event %+v", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event on the observer for a write on ZooKeeper")
	}
	// A write on ZooKeeper is read through the observer after a sync.
	if _, err := zc.Create("/mig/z", []byte("z"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, err := oc.Sync("/mig/z"); err != nil {
		t.Fatal(err)
	}
	if data, _, err := oc.Get("/mig/z"); err != nil || string(data) != "z" {
		t.Errorf("after sync the observer reads %q, %v", data, err)
	}

	// The observer's session ends with its client: ZooKeeper deletes the
	// ephemeral.
	oc.Close()
	// closeSession is forwarded and committed before the reply; zc's
	// server may be a follower a commit behind, hence the sync.
	if _, err := zc.Sync("/"); err != nil {
		t.Fatal(err)
	}
	if ok, _, _ := zc.Exists(seq); ok {
		t.Error("the ephemeral of the observer's closed session is still on ZooKeeper")
	}
}

// switchDialer sends a client to the address it holds now, and can cut
// its connection so it reconnects (to wherever the address is then).
type switchDialer struct {
	mu   sync.Mutex
	addr string
	nc   net.Conn
}

func (d *switchDialer) dial(_, _ string, timeout time.Duration) (net.Conn, error) {
	d.mu.Lock()
	addr := d.addr
	d.mu.Unlock()
	nc, err := net.DialTimeout("tcp", addr, timeout)
	if err == nil {
		d.mu.Lock()
		d.nc = nc
		d.mu.Unlock()
	}
	return nc, err
}

// movingClient connects a client through a switchDialer pointed at
// addr, and returns a wait for its next state want (failing on expiry).
func movingClient(t *testing.T, addr string) (*switchDialer, *zk.Conn, func(want zk.State)) {
	t.Helper()
	d := &switchDialer{addr: addr}
	c, ev, err := zk.Connect([]string{"127.0.0.1:1"}, 10*time.Second, zk.WithLogInfo(false), zk.WithDialer(d.dial))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	waitState := func(want zk.State) {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			select {
			case e := <-ev:
				if e.State == want {
					return
				}
				if e.State == zk.StateExpired {
					t.Fatal("session expired")
				}
			case <-deadline:
				t.Fatalf("no %v", want)
			}
		}
	}
	return d, c, waitState
}

// moveTo cuts the client's connection and points it at addr.
func (d *switchDialer) moveTo(addr string) {
	d.mu.Lock()
	d.addr = addr
	nc := d.nc
	d.mu.Unlock()
	if nc != nil {
		nc.Close()
	}
}

// TestSessionMovesBetweenZooKeeperAndObserver: a session opened on a
// ZooKeeper server moves to the zkraft observer (REVALIDATE), keeps its
// ephemeral and writes there, then moves back to ZooKeeper.
func TestSessionMovesBetweenZooKeeperAndObserver(t *testing.T) {
	t.Parallel()
	e := zktest.Start(t)
	obs := procs.StartFollower(t, e, e.ObserverID)
	d, c, waitState := movingClient(t, e.ClientAddrs()[0])
	waitState(zk.StateHasSession)
	id := c.SessionID()
	if _, err := c.Create("/moving", []byte("1"), zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	d.moveTo(obs.ClientAddr)
	waitState(zk.StateHasSession)
	if c.SessionID() != id {
		t.Fatalf("session %#x became %#x", id, c.SessionID())
	}
	// Its ephemeral's owner is the session; its writes are accepted
	// from the observer now (the leader answers SessionMoved otherwise).
	if _, err := c.Set("/moving", []byte("2"), -1); err != nil {
		t.Fatalf("write of a session moved to the observer: %v", err)
	}
	if _, err := c.Create("/moved", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if out, _ := procs.FourLetter(obs.ClientAddr, "cons"); !strings.Contains(out, fmt.Sprintf("sid=0x%x", id)) {
		t.Errorf("cons on the observer does not list session %#x:\n%s", id, out)
	}
	d.moveTo(e.ClientAddrs()[1])
	waitState(zk.StateHasSession)
	if _, err := c.Set("/moving", []byte("3"), -1); err != nil {
		t.Fatalf("write of a session moved back to ZooKeeper: %v", err)
	}
	data, st, err := c.Get("/moving")
	if err != nil || string(data) != "3" || st.EphemeralOwner != id {
		t.Fatalf("after the moves: %q %+v %v", data, st, err)
	}
}
