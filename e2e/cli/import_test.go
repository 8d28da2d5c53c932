package cli

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/testing/procs"
	"github.com/zkraft/zkraft/internal/testing/testproc"
	"github.com/zkraft/zkraft/internal/testing/zktest"
)

// TestImportCommand imports the golden ZooKeeper 3.8 data directory named
// by a zoo.cfg into a new data directory: refused while the zoo.cfg's
// client port is taken (a ZooKeeper still running), done once it is free,
// refused again over the state it wrote.
func TestImportCommand(t *testing.T) {
	t.Parallel()
	golden, err := filepath.Abs(filepath.Join("..", "..", "internal", "zookeeper", "datadir", "testdata", "zk38"))
	if err != nil {
		t.Fatal(err)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(busy.Addr().String())
	cfg := filepath.Join(t.TempDir(), "zoo.cfg")
	text := fmt.Sprintf("tickTime=2000\ndataDir=%s\nclientPort=%s\nclientPortAddress=127.0.0.1\nextendedTypesEnabled=true\n", golden, port)
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "zkraft")

	if _, err := procs.Run(t, "import-zookeeper", "--config", cfg, "--data-dir", target); err == nil || !strings.Contains(err.Error(), "still running") {
		t.Fatalf("import while the client port is taken: %v", err)
	}
	busy.Close()
	out, err := procs.Run(t, "import-zookeeper", "--config", cfg, "--data-dir", target)
	if err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	for _, want := range []string{"snapshot.15", "znodes          17", "last zxid       0x19", "already held    1"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(target, "snapshots", "*", "state.bin")); len(m) != 1 {
		t.Errorf("snapshots written: %v", m)
	}
	if _, err := procs.Run(t, "import-zookeeper", "--config", cfg, "--data-dir", target); err == nil || !strings.Contains(err.Error(), "already holds state") {
		t.Errorf("a second import over the first: %v", err)
	}
}

// TestImportEnsemble is the operator's procedure for a whole ensemble:
// `zkraft import-zookeeper --config zoo.cfg --from <ZooKeeper's dataDir>`
// on each of three members (the golden ZooKeeper 3.8 data), then each
// started from the same zoo.cfg. Every member serves the imported tree,
// and a write through one is seen on the others with a zxid after
// ZooKeeper's last.
func TestImportEnsemble(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts three server processes")
	}
	golden, err := filepath.Abs(filepath.Join("..", "..", "internal", "zookeeper", "datadir", "testdata", "zk38"))
	if err != nil {
		t.Fatal(err)
	}
	members := procs.StartPreparedEnsemble(t, 3, func(m *procs.Member) {
		out, err := testproc.Command(procs.Binary(t), "import-zookeeper", "--config", m.CfgPath, "--from", golden,
			"--extended-types").CombinedOutput()
		if err != nil {
			t.Fatalf("member %d: import-zookeeper: %v\n%s", m.ID, err, out)
		}
	}, "extendedTypesEnabled=true")
	conns := make([]*zk.Conn, len(members))
	for i, m := range members {
		c, _, err := zk.Connect([]string{m.ClientAddr}, 10*time.Second, zk.WithLogInfo(false))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns[i] = c
	}
	for i, c := range conns {
		data, st, err := c.Get("/app/cfg")
		if err != nil || string(data) != "world2" || st.Version != 2 || st.Mzxid != 0xb {
			t.Fatalf("member %d: /app/cfg = %q %+v %v, want ZooKeeper's world2 at version 2, mzxid 0xb", i+1, data, st, err)
		}
	}
	st, err := conns[0].Set("/app/x", []byte("after"), -1)
	if err != nil || st.Mzxid <= 0x19 {
		t.Fatalf("write after the import: %+v %v, want a zxid after ZooKeeper's last (0x19)", st, err)
	}
	for i, c := range conns[1:] {
		if _, err := c.Sync("/app/x"); err != nil {
			t.Fatal(err)
		}
		if data, _, err := c.Get("/app/x"); err != nil || string(data) != "after" {
			t.Fatalf("member %d: /app/x = %q %v", i+2, data, err)
		}
	}
}

// TestImportEnsembleMemberAhead: the members of a stopped ZooKeeper
// ensemble need not hold the same transactions (one may have logged a
// proposal the others never acknowledged). Two members import a directory
// without its last log (ZooKeeper's zxid 0x16) and elect a leader; the
// third imports the whole directory (0x19) and joins them. It takes the
// majority's state by a snapshot install, older than its own seed; after
// a write and a restart it must still serve the majority's history, not
// its own newer seed.
func TestImportEnsembleMemberAhead(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts three server processes")
	}
	golden, err := filepath.Abs(filepath.Join("..", "..", "internal", "zookeeper", "datadir", "testdata", "zk38"))
	if err != nil {
		t.Fatal(err)
	}
	behind := filepath.Join(t.TempDir(), "zk")
	if err := os.MkdirAll(filepath.Join(behind, "version-2"), 0o755); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(golden, "version-2", "*"))
	for _, f := range files {
		if filepath.Base(f) == "log.17" { // 0x17-0x19: an ephemeral's close, a session opened and closed
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(behind, "version-2", filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var first []*procs.Member
	members := procs.StartPreparedEnsemble(t, 3, func(m *procs.Member) {
		from := behind
		if m.ID == 3 {
			from = golden
			procs.LeaderOf(t, first, nil) // the two behind elect one of them first
		} else {
			first = append(first, m)
		}
		out, err := testproc.Command(procs.Binary(t), "import-zookeeper", "--config", m.CfgPath, "--from", from,
			"--extended-types").CombinedOutput()
		if err != nil {
			t.Fatalf("member %d: import-zookeeper: %v\n%s", m.ID, err, out)
		}
	}, "extendedTypesEnabled=true")
	// Member 3 takes clients only once its log passed the leader's check,
	// as a ZooKeeper follower serves only once synced: by then the leader's
	// snapshot has replaced its seed, which no client may read.
	if b, _ := os.ReadFile(members[2].LogPath); !strings.Contains(string(b), "dropping a snapshot newer than") {
		t.Fatalf("member 3 serves before the leader's snapshot replaced its seed:\n%s", procs.Tail(string(b), 20))
	}

	view := func(m *procs.Member) string {
		t.Helper()
		c, _, err := zk.Connect([]string{m.ClientAddr}, 10*time.Second, zk.WithLogInfo(false))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Sync("/"); err != nil {
			t.Fatalf("member %d: sync: %v", m.ID, err)
		}
		var b strings.Builder
		for _, p := range []string{"/", "/app", "/after"} {
			kids, st, err := c.Children(p)
			fmt.Fprintf(&b, "%s %v %+v %v\n", p, kids, st, err)
		}
		return b.String()
	}
	c, _, err := zk.Connect([]string{members[0].ClientAddr}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Create("/after", []byte("x"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	want := view(members[0])
	if !strings.Contains(want, "/after [] ") {
		t.Fatalf("member 1 after the write:\n%s", want)
	}
	if got := view(members[2]); got != want {
		t.Fatalf("member 3 serves another tree\nmember 3:\n%s\nmember 1:\n%s", got, want)
	}
	members[2].Kill()
	time.Sleep(200 * time.Millisecond)
	members[2].Start(t)
	deadline := time.Now().Add(30 * time.Second)
	for members[2].Mode() == "" && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if got := view(members[2]); got != want {
		t.Fatalf("member 3 after its restart serves another tree\nmember 3:\n%s\nmember 1:\n%s", got, want)
	}
	if b, _ := os.ReadFile(members[2].LogPath); !strings.Contains(string(b), "dropping a snapshot newer than") {
		t.Errorf("member 3 did not drop its seed for the leader's older snapshot:\n%s", procs.Tail(string(b), 20))
	}
}

// TestImportZooKeeperEnsembleData: ZooKeeper's servers hold their
// ensemble's membership in /zookeeper/config (their snapshots and
// reconfig transactions carry it). Imported into a new zkraft ensemble,
// it must not stay there: the members would take ZooKeeper's servers for
// theirs. /zookeeper/config is the new ensemble's membership, and the
// data is ZooKeeper's.
func TestImportZooKeeperEnsembleData(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts three ZooKeeper servers, then three zkraft members")
	}
	e := zktest.StartWith(t, []string{"reconfigEnabled=true", "skipACL=yes"})
	zc := procs.ConnectTo(t, e.Leader().ClientAddr)
	if _, err := zc.Create("/kept", []byte("zk"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	// A reconfig transaction in ZooKeeper's log, replayed by the import.
	if _, err := zc.IncrementalReconfig([]string{"server.7=127.0.0.1:21001:21002:observer;127.0.0.1:21003"}, nil, -1); err != nil {
		t.Fatal(err)
	}
	zkConfig, _, err := zc.Get("/zookeeper/config")
	if err != nil || !strings.Contains(string(zkConfig), "server.7=") {
		t.Fatalf("ZooKeeper's /zookeeper/config (%v):\n%s", err, zkConfig)
	}
	zc.Close()
	for _, s := range e.Servers {
		e.Kill(s)
	}
	members := procs.StartPreparedEnsemble(t, 3, func(m *procs.Member) {
		out, err := testproc.Command(procs.Binary(t), "import-zookeeper", "--config", m.CfgPath,
			"--from", e.Servers[m.ID-1].DataDir()).CombinedOutput()
		if err != nil {
			t.Fatalf("member %d: import-zookeeper: %v\n%s", m.ID, err, out)
		}
	})
	c := procs.ConnectTo(t, members[0].ClientAddr)
	if data, _, err := c.Get("/kept"); err != nil || string(data) != "zk" {
		t.Fatalf("/kept after the import: %q %v", data, err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		data, _, err := c.Get("/zookeeper/config")
		ok := err == nil && !strings.Contains(string(data), "server.7=")
		for _, m := range members {
			ok = ok && strings.Contains(string(data), m.ClientAddr)
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("zkraft's /zookeeper/config after the import (%v):\n%s\nZooKeeper's was:\n%s", err, data, zkConfig)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
