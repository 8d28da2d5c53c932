package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/cli/fourletter"
	"github.com/zkraft/zkraft/internal/zookeeper/importer"
)

// TestWayBackToZooKeeper is the way back of docs/operations.md's live
// migration: `zkraft snapshot save` from a running zkraft server, then
// `zkraft snapshot export-zookeeper` into a new Apache ZooKeeper 3.8's
// data directory (Debian's package); ZooKeeper loads it and serves every
// znode (persistent, sequential, ephemeral, container, digest and world
// ACLs) with zkraft's data, ACL and every Stat field. A session resumed
// with ZooKeeper's own password for its id (what a session ZooKeeper
// created carries through zkraft) is taken. The session zkraft created
// keeps its ephemeral there, but its client, reconnecting to ZooKeeper
// with zkraft's password, is told the session expired. A write
// to ZooKeeper then goes on from zkraft's zxid. export-zookeeper refuses a
// data directory holding ZooKeeper state.
func TestWayBackToZooKeeper(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a zkraft server and a ZooKeeper server")
	}
	java := requireZooKeeper(t)
	zr := startEnsemble(t, 1, "superDigest="+superDigest, "admin.rateLimiterIntervalInMS=0")[0]
	zkAddr := freeAddr(t) // where ZooKeeper will listen

	c, _, err := zk.Connect([]string{zr.clientAddr}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	writeAppTree(t, c, []byte("payload"))
	open := zk.WorldACL(zk.PermAll)
	if err := c.Delete("/app/jobs/job-0000000001", -1); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create("/secret", []byte("s"), 0, zk.DigestACL(zk.PermAll, "user", "pw")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create("/readonly", []byte("r"), 0, zk.WorldACL(zk.PermRead)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateContainer("/locks", nil, zk.FlagContainer, open); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create("/locks/held", nil, 0, open); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SetACL("/svc", append(zk.WorldACL(zk.PermRead|zk.PermCreate|zk.PermDelete), zk.DigestACL(zk.PermAll, "user", "pw")...), -1); err != nil {
		t.Fatal(err)
	}
	// A session zkraft created, holding an ephemeral. Its client knows
	// ZooKeeper's address too (nothing listens there yet), so it goes
	// there once zkraft is stopped.
	holder, events, err := zk.Connect([]string{zr.clientAddr, zkAddr}, 20*time.Second, zk.WithLogger(quietLogger{}))
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	// Drained from the start: go-zookeeper drops events its channel (of
	// 6) has no room for, and the reconnect attempts while no server
	// listens would crowd out the expiry.
	expiredCh := make(chan struct{})
	go func() {
		for ev := range events {
			if ev.State == zk.StateExpired {
				close(expiredCh)
				return
			}
		}
	}()
	if _, err := holder.Create("/svc/worker-1", []byte("up"), zk.FlagEphemeral, open); err != nil {
		t.Fatal(err)
	}
	want := dumpTree(t, zr.clientAddr, "/zookeeper/config")
	sid := c.SessionID()

	dir := t.TempDir()
	file := filepath.Join(dir, "backup.snap")
	if _, errOut, ok := runZkraft(t, nil, "snapshot", "save", "--admin-addr", zr.adminAddr, "--auth", "digest:super:secret", file); !ok {
		t.Fatalf("save: %s", errOut)
	}
	zkDir := filepath.Join(dir, "zookeeper")
	out, errOut, ok := runZkraft(t, nil, "snapshot", "export-zookeeper", "--data-dir", zkDir, file)
	if !ok {
		t.Fatalf("export-zookeeper: %s", errOut)
	}
	t.Logf("export-zookeeper:\n%s", out)
	snaps, _ := filepath.Glob(filepath.Join(zkDir, "version-2", "snapshot.*"))
	if len(snaps) != 1 {
		t.Fatalf("export-zookeeper wrote %v, want one snapshot.<zxid>", snaps)
	}
	if _, errOut, ok := runZkraft(t, nil, "snapshot", "export-zookeeper", "--data-dir", zkDir, file); ok ||
		!strings.Contains(errOut, "holds ZooKeeper state") {
		t.Errorf("a second export over the first: ok=%v, stderr %q (want a refusal)", ok, errOut)
	}
	zr.kill()

	// A standalone ZooKeeper 3.8 with the super user's digest.
	_, port, _ := strings.Cut(zkAddr, ":")
	cfg := fmt.Sprintf("tickTime=500\ndataDir=%s\nclientPortAddress=127.0.0.1\nclientPort=%s\nmaxClientCnxns=0\n"+
		"4lw.commands.whitelist=*\nadmin.enableServer=false\n", zkDir, port)
	cfgPath := filepath.Join(dir, "zoo.cfg")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "zookeeper.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	zkCmd := exec.Command(java, "-XX:-UsePerfData", "-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Dzookeeper.DigestAuthenticationProvider.superDigest="+superDigest,
		"-cp", "/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar",
		"org.apache.zookeeper.server.quorum.QuorumPeerMain", cfgPath)
	zkCmd.Stdout, zkCmd.Stderr = logf, logf
	if err := zkCmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = zkCmd.Wait(); logf.Close(); close(exited) }()
	t.Cleanup(func() {
		_ = zkCmd.Process.Kill()
		<-exited
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("ZooKeeper log:\n%s", tail(string(b), 60))
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(fourletter.Ask(zkAddr, "srvr"), "Mode: standalone") {
		select {
		case <-exited:
			t.Fatal("ZooKeeper exited: it could not load the snapshot")
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("ZooKeeper not serving after 60s")
		}
		time.Sleep(100 * time.Millisecond)
	}

	// A session whose password is ZooKeeper's own for its id, as a
	// session ZooKeeper created keeps it through an import or a cutover:
	// ZooKeeper resumes it.
	back := &scaleSession{id: sid, passwd: importer.Passwd(sid)}
	if err := back.open(zkAddr, 10*time.Second); err != nil {
		t.Errorf("resuming session %#x on ZooKeeper with ZooKeeper's password for it: %v", sid, err)
	} else {
		back.nc.Close()
	}

	// The session zkraft created: ZooKeeper holds it (the ephemeral is in
	// the tree compared below), but cannot check zkraft's password.
	select {
	case <-expiredCh:
	case <-time.After(30 * time.Second):
		t.Fatal("the client of zkraft's session was not told it expired within 30s of ZooKeeper serving")
	}

	if got := dumpTree(t, zkAddr, "/zookeeper/config"); got != want {
		t.Errorf("ZooKeeper serves another tree than zkraft's\nzkraft:\n%s\nZooKeeper:\n%s", want, got)
	}
	st, err := zkConnectAndCreate(t, zkAddr, "/after")
	if err != nil {
		t.Fatal(err)
	}
	var last int64
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "zxid "); ok {
			if _, err := fmt.Sscanf(strings.TrimSpace(v), "0x%x", &last); err != nil {
				t.Fatalf("export's zxid line %q: %v", line, err)
			}
		}
	}
	if st.Czxid <= last {
		t.Errorf("a write to ZooKeeper got zxid %#x, not above zkraft's %#x", st.Czxid, last)
	}
}

// zkConnectAndCreate creates p on addr and returns its Stat.
func zkConnectAndCreate(t *testing.T, addr, p string) (*zk.Stat, error) {
	t.Helper()
	c, _, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if _, err := c.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		return nil, fmt.Errorf("create %s on ZooKeeper: %w", p, err)
	}
	_, st, err := c.Get(p)
	return st, err
}
