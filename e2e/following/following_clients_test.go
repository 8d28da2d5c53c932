package following

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/procs"
	"github.com/zkraft/zkraft/internal/testing/testenv"
	"github.com/zkraft/zkraft/internal/testing/testproc"
	"github.com/zkraft/zkraft/internal/testing/zktest"
)

// runClient runs a client program for at most a minute and returns its
// output, failing t when it does not end well.
func runClient(t *testing.T, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := testproc.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil || !strings.HasSuffix(string(out), "DONE\n") {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return string(out)
}

// compileClients compiles the Java client programs of testdata against
// Debian's ZooKeeper client, once for the package's tests, and returns
// the directory of their classes.
func compileClients(t *testing.T) string {
	t.Helper()
	return procs.CompileJava(t, procs.ClientClassPath,
		filepath.Join("testdata", "ObserverClient.java"), filepath.Join("testdata", "ObserverWatchFailover.java"))
}

// compareTranscripts fails t where the client's transcript through the
// observer differs from the one it printed connected to ZooKeeper.
func compareTranscripts(t *testing.T, client, viaObserver, viaZooKeeper string) {
	t.Helper()
	if viaObserver != viaZooKeeper {
		t.Errorf("%s through the observer:\n%s\n%s connected to ZooKeeper:\n%s", client, viaObserver, client, viaZooKeeper)
	}
}

// TestKazooThroughObserver runs testdata/observer_kazoo.py with Debian's
// python3-kazoo connected only to the zkraft observer, then connected to
// a ZooKeeper server, and expects equal transcripts: creates of every
// kind, versioned get/set, children, watches fired by writes made on
// ZooKeeper, transactions, deletes and the session's ephemerals at close.
func TestKazooThroughObserver(t *testing.T) {
	t.Parallel()
	python, err := exec.LookPath("/usr/bin/python3") // Debian's, where python3-kazoo is
	if err == nil {
		err = testproc.Command(python, "-c", "import kazoo").Run()
	}
	if err != nil {
		testenv.Require(t, fmt.Errorf("python3-kazoo is missing (.ci/run installs it): %w", err))
	}
	e := zktest.Start(t)
	obs := procs.StartFollower(t, e, e.ObserverID)
	script := filepath.Join("testdata", "observer_kazoo.py")
	zkAddr := e.ClientAddrs()[0]
	viaObs := runClient(t, python, script, obs.ClientAddr, e.ClientAddrs()[1], "/kazoo-obs")
	viaZK := runClient(t, python, script, zkAddr, e.ClientAddrs()[1], "/kazoo-zk")
	compareTranscripts(t, "kazoo", viaObs, viaZK)
	t.Logf("kazoo transcript:\n%s", viaObs)
}

// TestJavaClientThroughObserver is TestKazooThroughObserver with the
// Java client of Debian's libzookeeper-java (testdata/ObserverClient.java).
func TestJavaClientThroughObserver(t *testing.T) {
	t.Parallel()
	_, java := procs.JavaTools(t)
	classes := compileClients(t)
	e := zktest.Start(t)
	obs := procs.StartFollower(t, e, e.ObserverID)
	run := func(addr, root string) string {
		args := append(append([]string{}, procs.JVMFlags...), "-cp", classes+":"+strings.Join(procs.ClientClassPath, ":"),
			"ObserverClient", addr, e.ClientAddrs()[1], root)
		return runClient(t, java, args...)
	}
	viaObs := run(obs.ClientAddr, "/java-obs")
	viaZK := run(e.ClientAddrs()[0], "/java-zk")
	compareTranscripts(t, "the Java client", viaObs, viaZK)
	t.Logf("Java client transcript:\n%s", viaObs)
}

// TestCuratorOnObserverSurvivesLeaderKill runs procs.RunCuratorFailover
// (an ephemeral PersistentNode, a LeaderLatch, a counter) connected only
// to the zkraft observer, and kills ZooKeeper's leader (-9) under it:
// Curator reconnects within its session (RECONNECTED, never LOST) and
// keeps its ephemeral and leadership, and writes work.
func TestCuratorOnObserverSurvivesLeaderKill(t *testing.T) {
	t.Parallel()
	procs.JavaTools(t) // skips without Java, before anything starts
	e := zktest.Start(t)
	obs := procs.StartFollower(t, e, e.ObserverID)
	procs.RunCuratorFailover(t, obs.ClientAddr, func(session string) {
		lead := e.Leader()
		e.Kill(lead)
		t.Logf("killed ZooKeeper's leader, server %d, under session 0x%s", lead.ID, session)
	})
}

// TestJavaWatchesOnObserverSurviveLeaderKill runs
// testdata/ObserverWatchFailover.java connected only to the observer:
// one-shot and persistent recursive watches set before ZooKeeper's leader
// is killed fire for writes made on ZooKeeper after the Java client
// reconnected (its SetWatches2 re-registers them on the observer).
func TestJavaWatchesOnObserverSurviveLeaderKill(t *testing.T) {
	t.Parallel()
	classes := compileClients(t)
	e := zktest.Start(t)
	obs := procs.StartFollower(t, e, e.ObserverID)
	script := procs.StartJavaScript(t, append([]string{classes}, procs.ClientClassPath...),
		"ObserverWatchFailover", obs.ClientAddr, strings.Join(e.ClientAddrs(), ","), "/java-watch-failover")
	script.UntilReady(nil)
	lead := e.Leader()
	e.Kill(lead)
	out, err := script.Finish(t, "KILLED", time.Minute)
	if err != nil || !strings.Contains(out, "DONE 0 failed") {
		t.Fatalf("the Java client's watches across the leader kill: %v\n%s", err, out)
	}
}
