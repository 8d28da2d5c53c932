package following

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/acl"
	"github.com/zkraft/zkraft/internal/cli/fourletter"
	"github.com/zkraft/zkraft/internal/testing/procs"
	"github.com/zkraft/zkraft/internal/testing/zktest"
)

// TestReconfigThroughObserver: a reconfig sent to a zkraft observer goes
// to ZooKeeper's leader, as a ZooKeeper observer forwards it, with the
// connection's identities: refused as NoAuth without WRITE on
// /zookeeper/config and as BadVersion for a stale version, as ZooKeeper
// answers; done for the super user, answered with the Stat ZooKeeper's
// /zookeeper/config then has. The observer's /zookeeper/config is
// ZooKeeper's new configuration (data and every Stat field), its config
// watch fires, conf lists the new membership, and a reconfig while frozen
// for a cutover is refused as ReconfigInProgress.
func TestReconfigThroughObserver(t *testing.T) {
	t.Parallel()
	e := zktest.StartWith(t, []string{"reconfigEnabled=true"},
		"-Dzookeeper.DigestAuthenticationProvider.superDigest="+acl.DigestFromAuth("admin:secret"))
	obs := procs.StartFollower(t, e, e.ObserverID, "reconfigEnabled=true")
	oc := procs.ConnectTo(t, obs.ClientAddr)
	zc := procs.ConnectTo(t, e.Leader().ClientAddr)
	_, before, w, err := oc.GetW("/zookeeper/config")
	if err != nil {
		t.Fatal(err)
	}
	_, electionPort, _ := net.SplitHostPort(procs.FreeAddr(t))
	joining := []string{fmt.Sprintf("server.7=%s:%s:observer;%s", procs.FreeAddr(t), electionPort, procs.FreeAddr(t))}

	if _, err := oc.IncrementalReconfig(joining, nil, -1); !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("reconfig without WRITE on /zookeeper/config: %v, want ZooKeeper's NoAuth", err)
	}
	if err := oc.AddAuth("digest", []byte("admin:secret")); err != nil {
		t.Fatal(err)
	}
	if _, err := oc.IncrementalReconfig(joining, nil, before.Mzxid+1); !errors.Is(err, zk.ErrBadVersion) {
		t.Fatalf("reconfig from a version that is not the current one: %v, want BadVersion", err)
	}
	st, err := oc.IncrementalReconfig(joining, nil, -1)
	if err != nil {
		t.Fatalf("reconfig through the observer: %v", err)
	}
	if _, err := zc.Sync("/zookeeper/config"); err != nil {
		t.Fatal(err)
	}
	want, zst, err := zc.Get("/zookeeper/config")
	if err != nil {
		t.Fatal(err)
	}
	if *st != *zst || !strings.Contains(string(want), joining[0]) {
		t.Fatalf("the reconfig answered %+v; ZooKeeper's /zookeeper/config is %+v:\n%s", st, zst, want)
	}
	got, ost, err := oc.Get("/zookeeper/config")
	if err != nil || string(got) != string(want) || *ost != *zst {
		t.Fatalf("the observer's /zookeeper/config %+v (%v):\n%s\nZooKeeper's %+v:\n%s", ost, err, got, zst, want)
	}
	select {
	case ev := <-w:
		if ev.Type != zk.EventNodeDataChanged || ev.Path != "/zookeeper/config" {
			t.Errorf("config watch event %+v", ev)
		}
	case <-time.After(10 * time.Second):
		t.Error("the config watch set on the observer did not fire")
	}
	conf := fourletter.Ask(obs.ClientAddr, "conf")
	for _, s := range []string{"server.7=", fmt.Sprintf("version=%x", zst.Mzxid), "peerType=1"} {
		if !strings.Contains(conf, s) {
			t.Errorf("conf on the observer lacks %q:\n%s", s, conf)
		}
	}

	// Frozen for a cutover, the observer refuses a reconfig at once.
	if status, out := procs.MigrationCall(t, obs, "migration_freeze", ""); status != http.StatusOK {
		t.Fatalf("freeze: %d %v", status, out)
	}
	_, err = oc.IncrementalReconfig(nil, []string{"7"}, -1)
	if status, out := procs.MigrationCall(t, obs, "migration_thaw", ""); status != http.StatusOK {
		t.Fatalf("thaw: %d %v", status, out)
	}
	if err == nil || err.Error() != "unknown error: -14" { // go-zookeeper names no ReconfigInProgress
		t.Errorf("reconfig while frozen: %v, want ReconfigInProgress", err)
	}
	// Thawed, the server leaves again. The thaw completes in the
	// background (the observer follows again, then releases what it
	// held), and until then a reconfig is still refused as in progress,
	// which a client retries.
	for deadline := time.Now().Add(20 * time.Second); ; {
		_, err := oc.IncrementalReconfig(nil, []string{"7"}, -1)
		if err == nil {
			break
		}
		if err.Error() != "unknown error: -14" || time.Now().After(deadline) {
			t.Fatalf("reconfig after the thaw: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if data, _, err := oc.Get("/zookeeper/config"); err != nil || strings.Contains(string(data), "server.7=") {
		t.Errorf("the observer's /zookeeper/config after server 7 left (%v):\n%s", err, data)
	}
}
