package servertest_test

import (
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/server/servertest"
)

// TestWithGoZooKeeper is the example of docs/go-testing.md: a test of
// code that uses ZooKeeper, against a real zkraft started in the test's
// process, through go-zookeeper, with a watch.
func TestWithGoZooKeeper(t *testing.T) {
	zs := servertest.Start(t) // stopped, and its data removed, when the test ends
	conn, _, err := zk.Connect([]string{zs.Addr()}, 5*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	if _, err := conn.Create("/config", []byte("v1"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	data, _, changed, err := conn.GetW("/config")
	if err != nil || string(data) != "v1" {
		t.Fatalf("get: %q %v", data, err)
	}
	if _, err := conn.Set("/config", []byte("v2"), -1); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-changed:
		if ev.Type != zk.EventNodeDataChanged || ev.Path != "/config" {
			t.Fatalf("watch: %+v", ev)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no watch event")
	}
}

// TestEnsembleFailover starts three members on loopback, writes through
// one, stops the leader, and goes on writing through the others with the
// same session, as a client of a real ensemble does.
func TestEnsembleFailover(t *testing.T) {
	e := servertest.StartEnsemble(t, 3)
	conn, _, err := zk.Connect(e.Addrs(), 5*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Create("/before", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	session := conn.SessionID()
	e.Leader().Stop()
	e.WaitLeader()
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err := conn.Create("/after", nil, 0, zk.WorldACL(zk.PermAll))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no write after the leader stopped: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if ok, _, err := conn.Exists("/before"); !ok || err != nil {
		t.Fatalf("/before lost: %v", err)
	}
	if conn.SessionID() != session {
		t.Fatalf("session %#x became %#x", session, conn.SessionID())
	}
}

// TestRestart: a stopped server starts again on its data directory with
// what it held.
func TestRestart(t *testing.T) {
	zs := servertest.Start(t)
	conn, _, err := zk.Connect([]string{zs.Addr()}, 5*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Create("/kept", []byte("x"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	zs.Stop()
	zs.Restart()
	conn, _, err = zk.Connect([]string{zs.Addr()}, 5*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if data, _, err := conn.Get("/kept"); err != nil || string(data) != "x" {
		t.Fatalf("after the restart: %q %v", data, err)
	}
}
