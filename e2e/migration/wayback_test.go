package migration

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/cli/fourletter"
	"github.com/zkraft/zkraft/internal/testing/procs"
	"github.com/zkraft/zkraft/internal/testing/testproc"
	"github.com/zkraft/zkraft/internal/zookeeper/importer"
	"github.com/zkraft/zkraft/jute"
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
	zr := procs.StartEnsemble(t, 1, "superDigest="+procs.SuperDigest, "admin.rateLimiterIntervalInMS=0")[0]
	zkAddr := procs.FreeAddr(t) // where ZooKeeper will listen

	c, _, err := zk.Connect([]string{zr.ClientAddr}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	procs.WriteAppTree(t, c, []byte("payload"))
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
	//
	// It reaches ZooKeeper only once ZooKeeper serves: a connection
	// ZooKeeper 3.8 accepts while it still loads its snapshot can be
	// left unanswered and open (a NullPointerException in
	// NIOServerCnxn.close, seen on a loaded machine), and go-zookeeper
	// waits ten times its read timeout (133 s) for the handshake's reply.
	var zkServing atomic.Bool
	dial := func(network, addr string, timeout time.Duration) (net.Conn, error) {
		if addr == zkAddr && !zkServing.Load() {
			return nil, fmt.Errorf("ZooKeeper at %s does not serve yet", addr)
		}
		return net.DialTimeout(network, addr, timeout)
	}
	holder, events, err := zk.Connect([]string{zr.ClientAddr, zkAddr}, 20*time.Second, zk.WithLogger(procs.QuietLogger{}),
		zk.WithDialer(dial))
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
	want := procs.DumpTree(t, zr.ClientAddr, "/zookeeper/config")
	sid := c.SessionID()

	dir := t.TempDir()
	file := filepath.Join(dir, "backup.snap")
	if _, errOut, ok := procs.RunSplit(t, nil, "snapshot", "save", "--admin-addr", zr.AdminAddr, "--auth", "digest:super:secret", file); !ok {
		t.Fatalf("save: %s", errOut)
	}
	zkDir := filepath.Join(dir, "zookeeper")
	out, errOut, ok := procs.RunSplit(t, nil, "snapshot", "export-zookeeper", "--data-dir", zkDir, file)
	if !ok {
		t.Fatalf("export-zookeeper: %s", errOut)
	}
	t.Logf("export-zookeeper:\n%s", out)
	snaps, _ := filepath.Glob(filepath.Join(zkDir, "version-2", "snapshot.*"))
	if len(snaps) != 1 {
		t.Fatalf("export-zookeeper wrote %v, want one snapshot.<zxid>", snaps)
	}
	if _, errOut, ok := procs.RunSplit(t, nil, "snapshot", "export-zookeeper", "--data-dir", zkDir, file); ok ||
		!strings.Contains(errOut, "holds ZooKeeper state") {
		t.Errorf("a second export over the first: ok=%v, stderr %q (want a refusal)", ok, errOut)
	}
	zr.Kill()

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
	zkCmd := testproc.Command(java, "-XX:-UsePerfData", "-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Dzookeeper.DigestAuthenticationProvider.superDigest="+procs.SuperDigest,
		"-cp", "/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar",
		"org.apache.zookeeper.server.quorum.QuorumPeerMain", cfgPath)
	zkCmd.Stdout, zkCmd.Stderr = logf, logf
	if err := testproc.Start(t, zkCmd); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = zkCmd.Wait(); logf.Close(); close(exited) }()
	t.Cleanup(func() {
		_ = zkCmd.Process.Kill()
		<-exited
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("ZooKeeper log:\n%s", procs.Tail(string(b), 60))
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
	zkServing.Store(true)
	// Compared at once: the ephemeral lives on ZooKeeper only until its
	// session's 20 s timeout, counted from ZooKeeper's start, and on a
	// loaded machine the expiry below came after it (the tree then lacked
	// /svc/worker-1).
	if got := procs.DumpTree(t, zkAddr, "/zookeeper/config"); got != want {
		t.Errorf("ZooKeeper serves another tree than zkraft's\nzkraft:\n%s\nZooKeeper:\n%s", want, got)
	}

	// A session whose password is ZooKeeper's own for its id, as a
	// session ZooKeeper created keeps it through an import or a cutover:
	// ZooKeeper resumes it.
	if err := resumeSession(zkAddr, sid, importer.Passwd(sid), 10*time.Second); err != nil {
		t.Errorf("resuming session %#x on ZooKeeper with ZooKeeper's password for it: %v", sid, err)
	}

	// The session zkraft created: ZooKeeper holds it (the ephemeral is in
	// the tree compared above), but cannot check zkraft's password.
	select {
	case <-expiredCh:
	case <-time.After(30 * time.Second):
		t.Fatal("the client of zkraft's session was not told it expired within 30s of ZooKeeper serving")
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

// resumeSession connects to addr with session id and its password, as a
// client resuming its session does, and reports whether the server took
// the session back (an expired one is answered with a timeout of 0).
func resumeSession(addr string, id int64, passwd []byte, timeout time.Duration) error {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer nc.Close()
	var w jute.Writer
	at := jute.BeginFrame(&w)
	(&jute.ConnectRequest{TimeOut: int32(timeout / time.Millisecond), SessionID: id, Passwd: passwd}).Encode(&w)
	jute.EndFrame(&w, at)
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := nc.Write(w.Buf); err != nil {
		return err
	}
	b, err := jute.ReadFrame(bufio.NewReader(nc), nil, 1<<16)
	if err != nil {
		return err
	}
	var resp jute.ConnectResponse
	if err := jute.Unmarshal(b, &resp); err != nil {
		return err
	}
	if resp.TimeOut <= 0 {
		return fmt.Errorf("session %#x expired", id)
	}
	if resp.SessionID != id {
		return fmt.Errorf("resumed session %#x answered as %#x", id, resp.SessionID)
	}
	return nil
}
