package migration

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/testing/procs"
	"github.com/zkraft/zkraft/internal/testing/zktest"
)

// TestCutoverCalledOff: an observer frozen and stopped for a cutover
// that does not happen follows ZooKeeper again when thawed: the write it
// held is forwarded and answered, what ZooKeeper committed meanwhile
// reaches it, and its client keeps its connection and session.
func TestCutoverCalledOff(t *testing.T) {
	e := zktest.Start(t)
	obs := procs.StartFollower(t, e, e.ObserverID)
	c, ev, err := zk.Connect([]string{obs.ClientAddr}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	procs.WaitSession(t, c)
	sid := c.SessionID()
	zc := procs.ConnectTo(t, e.ClientAddrs()...)
	look := procs.ConnectTo(t, obs.ClientAddr) // sessions are not created while frozen

	status, out := procs.MigrationCall(t, obs, "migration_freeze", "")
	if status != http.StatusOK {
		t.Fatalf("freeze: %d %v", status, out)
	}
	zxid := int64(out["last_zxid"].(float64))
	held := make(chan error, 1)
	go func() {
		_, err := c.Create("/held-during-freeze", nil, 0, zk.WorldACL(zk.PermAll))
		held <- err
	}()
	select {
	case err := <-held:
		t.Fatalf("a write was answered while frozen: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	if status, out := procs.MigrationCall(t, obs, "migration_stop", fmt.Sprintf("zxid=%d", zxid)); status != http.StatusOK {
		t.Fatalf("stop at %#x: %d %v", zxid, status, out)
	}
	// ZooKeeper goes on without the observer.
	if _, err := zc.Create("/zk-while-stopped", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	// (A second client looks: the first one's requests wait behind its
	// held write, its pings too, so the hold must stay short.)
	if ok, _, _ := look.Exists("/zk-while-stopped"); ok {
		t.Error("a stopped observer applied a later transaction")
	}
	if status, out := procs.MigrationCall(t, obs, "migration_thaw", ""); status != http.StatusOK {
		t.Fatalf("thaw: %d %v", status, out)
	}
	select {
	case err := <-held:
		if err != nil {
			t.Fatalf("the held write after the thaw: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the held write was not answered after the thaw")
	}
	if _, err := c.Sync("/"); err != nil {
		t.Fatal(err)
	}
	if ok, _, err := c.Exists("/zk-while-stopped"); !ok || err != nil {
		t.Errorf("ZooKeeper's write while stopped is not on the thawed observer: %v", err)
	}
	// zc may be on a ZooKeeper server that has not applied it yet.
	if _, err := zc.Sync("/"); err != nil {
		t.Fatal(err)
	}
	if ok, _, _ := zc.Exists("/held-during-freeze"); !ok {
		t.Error("the held write is not on ZooKeeper")
	}
	if c.SessionID() != sid {
		t.Errorf("session %#x became %#x", sid, c.SessionID())
	}
	for {
		select {
		case e := <-ev:
			if e.State == zk.StateDisconnected || e.State == zk.StateExpired {
				t.Errorf("the client saw %v during the called-off cutover", e.State)
			}
			continue
		default:
		}
		break
	}
	if srvr, _ := procs.FourLetter(obs.ClientAddr, "srvr"); !strings.Contains(srvr, "Mode: observer") {
		t.Errorf("after the thaw:\n%s", srvr)
	}
}
