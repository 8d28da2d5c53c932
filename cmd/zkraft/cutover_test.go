package main

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/zktest"
)

// TestCutoverKeepsSessions: a zkraft observer of a ZooKeeper 3.8
// ensemble, its clients connected, cuts over to a zkraft ensemble of its
// own: no session expires, a client's ephemeral and watch survive, every
// acknowledged write of a writer running throughout is there, zxids go
// on above ZooKeeper's, ZooKeeper can be stopped, and a restart starts
// the server as the member.
func TestCutoverKeepsSessions(t *testing.T) {
	e := zktest.Start(t)
	obs := startFollower(t, e, e.ObserverID)

	holder, holderEv, err := zk.Connect([]string{obs.clientAddr}, 6*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	expired := make(chan struct{})
	go func() {
		for ev := range holderEv {
			if ev.State == zk.StateExpired {
				close(expired)
				return
			}
		}
	}()
	waitSession(t, holder)
	sid := holder.SessionID()
	if _, err := holder.Create("/lock", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, err := holder.Create("/w", []byte("0"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	_, _, watch, err := holder.GetW("/w")
	if err != nil {
		t.Fatal(err)
	}

	// A client still on ZooKeeper: the cutover refuses without --force.
	onZK := connectTo(t, e.ClientAddrs()[0])
	args := []string{"migrate", "cutover", "--admin-addr", obs.adminAddr, "--auth", "digest:admin:secret", "--timeout", "30s"}
	if _, err := runApp(args...); err == nil || !strings.Contains(err.Error(), "not connected to a zkraft observer") {
		t.Fatalf("cutover with a session on ZooKeeper: %v", err)
	}
	onZK.Close()

	// A writer through the observer across the cutover.
	writer := connectTo(t, obs.clientAddr)
	if _, err := writer.Create("/acked", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var acked []string
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			p, err := writer.Create("/acked/w-", []byte(fmt.Sprint(i)), zk.FlagSequence, zk.WorldACL(zk.PermAll))
			if err == nil {
				mu.Lock()
				acked = append(acked, p)
				mu.Unlock()
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	time.Sleep(300 * time.Millisecond)
	before := e.LastZxid(e.Leader())

	out, err := runApp(args...)
	if err != nil {
		t.Fatalf("cutover: %v\n%s", err, out)
	}
	t.Logf("cutover:\n%s", out)
	if !strings.Contains(out, "writes were held for") {
		t.Errorf("the cutover does not say how long writes were held:\n%s", out)
	}
	time.Sleep(300 * time.Millisecond)
	close(stop)
	<-done

	// ZooKeeper goes; zkraft serves on.
	for _, s := range e.Servers {
		e.Kill(s)
	}
	if srvr, _ := fourLetter(obs.clientAddr, "srvr"); !strings.Contains(srvr, "Mode: standalone") && !strings.Contains(srvr, "Mode: leader") {
		t.Errorf("after the cutover srvr says:\n%s", srvr)
	}
	if _, err := holder.Set("/w", []byte("1"), -1); err != nil {
		t.Fatalf("a write after the cutover: %v", err)
	}
	select {
	case ev := <-watch:
		if ev.Type != zk.EventNodeDataChanged {
			t.Errorf("watch event %+v", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a watch set before the cutover did not fire after it")
	}
	_, st, err := holder.Get("/lock")
	if err != nil || st.EphemeralOwner != sid || holder.SessionID() != sid {
		t.Fatalf("the holder's ephemeral after the cutover: %+v %v (session %#x, was %#x)", st, err, holder.SessionID(), sid)
	}
	_, wst, err := holder.Get("/w")
	if err != nil || wst.Mzxid <= before {
		t.Errorf("a write after the cutover has zxid %#x, not above ZooKeeper's %#x (%v)", wst.Mzxid, before, err)
	}
	mu.Lock()
	n := len(acked)
	for _, p := range acked {
		if ok, _, err := holder.Exists(p); !ok || err != nil {
			t.Errorf("acknowledged write %s is missing after the cutover (%v)", p, err)
		}
	}
	mu.Unlock()
	if n < 20 {
		t.Errorf("the writer wrote only %d nodes", n)
	}
	select {
	case <-expired:
		t.Fatal("the holder's session expired")
	default:
	}

	// A restart starts as the member, with the tree and the session.
	obs.kill()
	time.Sleep(200 * time.Millisecond)
	obs.start(t)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if srvr, err := fourLetter(obs.clientAddr, "srvr"); err == nil && (strings.Contains(srvr, "Mode: standalone") || strings.Contains(srvr, "Mode: leader")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server does not serve as the member after a restart")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, st, err := holder.Get("/lock"); err != nil || st.EphemeralOwner != sid {
		t.Fatalf("the ephemeral after the restart: %+v %v", st, err)
	}
	select {
	case <-expired:
		t.Fatal("the holder's session expired")
	default:
	}
}

func waitSession(t *testing.T, c *zk.Conn) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for c.State() != zk.StateHasSession {
		if time.Now().After(deadline) {
			t.Fatal("no session")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var _ = errors.Is
