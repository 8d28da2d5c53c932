package e2e

import (
	"fmt"

	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// TestImportZooKeeper migrates a live Apache ZooKeeper 3.8 server to
// zkraft the way an operator would: ZooKeeper is stopped,
// `zkraft import-zookeeper` reads its data directory (snapCount is small,
// so several snapshots and logs), and zkraft starts on ZooKeeper's
// address. Every znode comes back with the same data, ACL and Stat (every
// field); a client that held a session and an ephemeral across the switch
// reconnects on its own, keeps both and writes on; new zxids follow
// ZooKeeper's. It runs with each of ZooKeeper's snapshot formats
// (zookeeper.snapshot.compression.method: none, gz, snappy).
func TestImportZooKeeper(t *testing.T) {
	skipShort(t)
	t.Parallel()
	needJava(t)
	for _, method := range []string{"none", "gz", "snappy"} {
		t.Run(method, func(t *testing.T) {
			t.Parallel()
			importZooKeeper(t, method)
		})
	}
}

func importZooKeeper(t *testing.T, compression string) {
	zkSrv := StartServer(t, ServerOptions{Kind: targetZookeeper, ZooCfg: []string{"snapCount=40"},
		JVMArgs: []string{"-Dzookeeper.snapshot.compression.method=" + compression}})

	keeper := connect(t, zkSrv, 30*time.Second)
	if _, err := keeper.Create("/mig", []byte("root"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, err := keeper.Create("/mig/eph", []byte("mine"), zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	writeMigrationHistory(t, connect(t, zkSrv, 10*time.Second))
	before := dumpWithACLs(t, superClient(t, zkSrv))
	var lastZK int64
	if _, st, err := keeper.Get("/mig"); err == nil {
		lastZK = st.Pzxid
	}

	sessionID := keeper.SessionID()
	if err := zkSrv.Stop(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out, err := runTool(t, time.Minute, "", zkraftBin, "import-zookeeper",
		"--from", zkSrv.dataDir, "--data-dir", filepath.Join(dir, "data"), "--extended-types")
	if err != nil {
		t.Fatalf("import-zookeeper: %v\n%s", err, out)
	}
	t.Logf("import-zookeeper:\n%s", out)
	if ext := map[string]string{"gz": ".gz", "snappy": ".snappy"}[compression]; !strings.Contains(out, ext+"\n") {
		t.Errorf("the snapshot imported is not a %s one:\n%s", compression, out)
	}
	zr := &Server{Addr: zkSrv.Addr, Kind: targetZkraft, dir: dir, dataDir: filepath.Join(dir, "data"),
		logPath: filepath.Join(dir, "server.log"), port: zkSrv.port}
	t.Cleanup(func() {
		if err := zr.Stop(); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			t.Logf("zkraft log:\n%s", zr.LogTail(80))
		}
	})
	if err := zr.Start(); err != nil {
		t.Fatal(err)
	}

	// The keeper's client reconnects to the same address by itself.
	keeper.waitState(t, zk.StateHasSession, 30*time.Second)
	if keeper.SessionID() != sessionID {
		t.Fatalf("session after the switch %#x, want %#x", keeper.SessionID(), sessionID)
	}
	if after := dumpWithACLs(t, superClient(t, zr)); after != before {
		t.Errorf("the tree differs after the import\nZooKeeper:\n%s\nzkraft:\n%s", before, after)
	}
	_, st, err := keeper.Get("/mig/eph")
	if err != nil || st.EphemeralOwner != sessionID {
		t.Fatalf("the keeper's ephemeral after the switch: %+v %v", st, err)
	}
	st, err = keeper.Set("/mig/eph", []byte("still mine"), st.Version)
	if err != nil || st.Mzxid <= lastZK {
		t.Fatalf("write after the switch: %+v %v (ZooKeeper's last zxid %#x)", st, err, lastZK)
	}
}

// writeMigrationHistory gives the tree every kind of znode and change the
// import must carry: sequential, container, TTL and digest-ACL nodes,
// setData and setACL, deletes, a multi and a failed multi, a quota, and a
// session closed with its ephemeral. Some 120 transactions, several
// snapshots at snapCount=40.
func writeMigrationHistory(t *testing.T, c *client) {
	t.Helper()
	open := zk.WorldACL(zk.PermAll)
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.Create("/mig/cfg", []byte("v0"), 0, open))
	var seqs []string
	for i := 0; i < 30; i++ {
		must(c.Set("/mig/cfg", []byte(fmt.Sprintf("v%d", i+1)), -1))
		p, err := c.Create("/mig/seq-", []byte{byte(i)}, zk.FlagSequence, open)
		must(p, err)
		seqs = append(seqs, p)
	}
	for i := 0; i < 10; i++ {
		must(nil, c.Delete(seqs[2*i], -1))
	}
	must(c.CreateContainer("/mig/box", []byte("c"), zk.FlagContainer, open))
	must(c.Create("/mig/box/item", []byte("i"), 0, open))
	must(c.CreateTTL("/mig/ttl", []byte("t"), zk.FlagTTL, open, time.Hour))
	must(nil, c.AddAuth("digest", []byte("alice:secret")))
	must(c.Create("/mig/private", []byte("p"), 0, zk.DigestACL(zk.PermAll, "alice", "secret")))
	must(c.SetACL("/mig/cfg", append(zk.WorldACL(zk.PermRead), zk.DigestACL(zk.PermAll, "alice", "secret")...), -1))
	must(c.Multi(
		&zk.CreateRequest{Path: "/mig/m1", Data: []byte("1"), Acl: open},
		&zk.SetDataRequest{Path: "/mig/m1", Data: []byte("2"), Version: 0},
		&zk.CheckVersionRequest{Path: "/mig/box", Version: 0},
	))
	if _, err := c.Multi(
		&zk.CreateRequest{Path: "/mig/m2", Data: []byte("x"), Acl: open},
		&zk.DeleteRequest{Path: "/mig/none", Version: -1},
	); err == nil {
		t.Fatal("a multi deleting a missing node succeeded")
	}
	must(c.Create("/zookeeper/quota/mig", nil, 0, open))
	must(c.Create("/zookeeper/quota/mig/zookeeper_limits", []byte("count=100,bytes=-1"), 0, open))
	must(c.Create("/zookeeper/quota/mig/zookeeper_stats", []byte("count=0,bytes=0"), 0, open))
	must(c.Create("/mig/late", []byte("after the quota"), 0, open))
	temp := connectAddr(t, c)
	must(temp.Create("/mig/gone", nil, zk.FlagEphemeral, open))
	temp.Close()
}

// connectAddr opens another session on c's server.
func connectAddr(t *testing.T, c *client) *zk.Conn {
	t.Helper()
	conn, _, err := zk.Connect([]string{c.Server()}, 10*time.Second, zk.WithLogger(clientLogger()))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for conn.State() != zk.StateHasSession && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	return conn
}

// superClient is a session authenticated as the super user, which every
// test server accepts.
func superClient(t *testing.T, s *Server) *client {
	t.Helper()
	c := connect(t, s, 10*time.Second)
	if err := c.AddAuth("digest", []byte(superUser+":"+superPassword)); err != nil {
		t.Fatal(err)
	}
	return c
}

// dumpWithACLs renders every znode but /zookeeper/config (each server's
// own membership): path, data, ACL and every Stat field.
func dumpWithACLs(t *testing.T, c *client) string {
	t.Helper()
	var b strings.Builder
	var walk func(p string)
	walk = func(p string) {
		if p == "/zookeeper/config" {
			return
		}
		data, st, err := c.Get(p)
		if err != nil {
			t.Fatalf("get %s: %v", p, err)
		}
		acl, _, err := c.GetACL(p)
		if err != nil {
			t.Fatalf("getACL %s: %v", p, err)
		}
		fmt.Fprintf(&b, "%s %q %v %+v\n", p, data, acl, *st)
		kids, _, err := c.Children(p)
		if err != nil {
			t.Fatalf("children %s: %v", p, err)
		}
		for _, k := range sorted(kids) {
			walk(strings.TrimSuffix(p, "/") + "/" + k)
		}
	}
	walk("/")
	return b.String()
}
