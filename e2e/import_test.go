package e2e

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
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
// own membership) and the children of the prune paths: path, data, ACL and
// every Stat field.
func dumpWithACLs(t *testing.T, c *client, prune ...string) string {
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
		if slices.Contains(prune, p) {
			return
		}
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

// TestImportFuzzySnapshots imports a ZooKeeper that snapshotted many
// times while sessions raced to create, change (data, and ACL to lists
// never used before) and delete children of one parent and closed with
// ephemerals there, so its snapshots are fuzzy (they hold changes logged
// after their zxid) in ways no fixed history makes happen every time.
// Each of its last snapshots is imported in turn (a copy of its directory
// without the newer ones), with every log after it replayed; each import
// must build what ZooKeeper itself builds when it restarts on its
// directory: every znode with the same data, ACL and Stat, the parents'
// cversion and pzxid included.
func TestImportFuzzySnapshots(t *testing.T) {
	skipShort(t)
	t.Parallel()
	needJava(t)
	// Small preallocated logs: every snapshot starts a new one, and each
	// import reads a copy.
	zkSrv := StartServer(t, ServerOptions{Kind: targetZookeeper, ZooCfg: []string{"snapCount=30"},
		JVMArgs: []string{"-Dzookeeper.preAllocSize=16"}})
	c := connect(t, zkSrv, 10*time.Second)
	open := zk.WorldACL(zk.PermAll)
	for _, p := range []string{"/fz", "/fz/sub", "/big"} {
		if _, err := c.Create(p, nil, 0, open); err != nil {
			t.Fatal(err)
		}
	}
	// A snapshot writing /big's 20,000 children takes some milliseconds:
	// changes to /fz logged in that time reach the snapshot when /fz comes
	// after /big (ZooKeeper writes children in hash order).
	for i := 0; i < 20; i++ {
		ops := make([]any, 1000)
		for k := range ops {
			ops[k] = &zk.CreateRequest{Path: fmt.Sprintf("/big/n%d-%d", i, k), Data: []byte("0123456789"), Acl: open}
		}
		if _, err := c.Multi(ops...); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	stop := time.Now().Add(2 * time.Second)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- fuzzyWorker(zkSrv.Addr, w, stop)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	live := dumpWithACLs(t, superClient(t, zkSrv), "/big")
	c.Close()
	if err := zkSrv.Stop(); err != nil {
		t.Fatal(err)
	}
	snaps, err := filepath.Glob(filepath.Join(zkSrv.dataDir, "version-2", "snapshot.*"))
	if err != nil || len(snaps) < 2 {
		t.Fatalf("ZooKeeper's snapshots: %v %v", snaps, err)
	}
	slices.SortFunc(snaps, func(a, b string) int { return cmp.Compare(snapZxid(t, a), snapZxid(t, b)) })
	snaps = snaps[max(0, len(snaps)-9):]

	// ZooKeeper restarted on its own directory is the reference. (Its
	// start adds a snapshot and its probe's session, which change no
	// znode: the imports read copies made before.)
	copies := make([]string, len(snaps))
	for i := range snaps {
		// The one before too, in case this one was cut short.
		copies[i] = copyZooKeeperDir(t, zkSrv.dataDir, snapZxid(t, snaps[i]), snapZxid(t, snaps[max(i-1, 0)]))
	}
	// ZooKeeper 3.8.0 cannot always load its own directory: when a
	// snapshot caught a node's new ACL but not the ACL cache's entry for
	// it, the replay of a setData on that node fails ("Failed to fetch
	// acls") and the server exits. The tree it served before it stopped is
	// the reference then.
	want := live
	if err := zkSrv.Restart(); err != nil {
		t.Logf("ZooKeeper does not start on its own directory (%v): comparing with the tree it served before it stopped\n%s", err, zkSrv.LogTail(30))
	} else {
		want = dumpWithACLs(t, superClient(t, zkSrv), "/big")
		if err := zkSrv.Stop(); err != nil {
			t.Fatal(err)
		}
		if want != live {
			t.Logf("ZooKeeper restarted on its own directory serves another tree than before it stopped\nbefore:\n%s\nafter:\n%s", live, want)
		}
	}

	held, dead := 0, 0
	for i, from := range copies {
		dir := t.TempDir()
		out, err := runTool(t, time.Minute, "", zkraftBin, "import-zookeeper",
			"--from", from, "--data-dir", filepath.Join(dir, "data"), "--extended-types")
		if err != nil {
			t.Fatalf("import-zookeeper: %v\n%s", err, out)
		}
		// A snapshot cut short when ZooKeeper stopped does not parse: the
		// import, like ZooKeeper, takes the newest one that does.
		if !strings.Contains(out, filepath.Base(snaps[i])+"\n") {
			t.Logf("%s is not whole: the import read an older one\n%s", filepath.Base(snaps[i]), out)
		}
		if strings.Contains(out, "already held") {
			held++
		}
		if strings.Contains(out, "dead ephemerals") {
			dead++
		}
		zr := &Server{Addr: zkSrv.Addr, Kind: targetZkraft, dir: dir, dataDir: filepath.Join(dir, "data"),
			logPath: filepath.Join(dir, "server.log"), port: zkSrv.port}
		if err := zr.Start(); err != nil {
			t.Fatal(err)
		}
		got := dumpWithACLs(t, superClient(t, zr), "/big")
		if err := zr.Stop(); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("imported from %s, the tree differs from ZooKeeper's on the same directory\nimport:\n%s\nZooKeeper:\n%s\nzkraft:\n%s",
				filepath.Base(snaps[i]), out, want, got)
		}
	}
	t.Logf("%d imports from snapshots %s..%s, %d of them fuzzy (held changes logged after them), %d with ephemerals of sessions the snapshot lacked and that had closed",
		len(snaps), filepath.Base(snaps[0]), filepath.Base(snaps[len(snaps)-1]), held, dead)
}

// snapZxid is the zxid a ZooKeeper snapshot file is named for.
func snapZxid(t *testing.T, path string) int64 {
	t.Helper()
	name := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".gz"), ".snappy")
	z, err := strconv.ParseInt(strings.TrimPrefix(name, "snapshot."), 16, 64)
	if err != nil {
		t.Fatalf("snapshot %s: %v", path, err)
	}
	return z
}

// copyZooKeeperDir copies a stopped ZooKeeper's dataDir with its logs and
// only the snapshots keep names, so an import reads the newest of those
// and the logs after it.
func copyZooKeeperDir(t *testing.T, dataDir string, keep ...int64) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "zk")
	if err := os.MkdirAll(filepath.Join(dst, "version-2"), 0o755); err != nil {
		t.Fatal(err)
	}
	files, err := os.ReadDir(filepath.Join(dataDir, "version-2"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := f.Name()
		if strings.HasPrefix(name, "snapshot.") && !slices.Contains(keep, snapZxid(t, name)) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dataDir, "version-2", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, "version-2", name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// fuzzyWorker opens sessions on addr until stop, each creating, changing
// (data and ACL) and deleting children of /fz and /fz/sub, leaving
// ephemerals there for its close to delete.
func fuzzyWorker(addr string, w int, stop time.Time) error {
	open := zk.WorldACL(zk.PermAll)
	for round := 0; time.Now().Before(stop); round++ {
		conn, _, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogger(clientLogger()))
		if err != nil {
			return err
		}
		prev := ""
		for k := 0; k < 4; k++ {
			p := fmt.Sprintf("/fz/w%d-%d-%d", w, round, k)
			if _, err := conn.Create(p, []byte("a"), 0, open); err != nil {
				conn.Close()
				return fmt.Errorf("create %s: %w", p, err)
			}
			if _, err := conn.Create(fmt.Sprintf("/fz/sub/e%d-%d-%d", w, round, k), nil, zk.FlagEphemeral, open); err != nil {
				conn.Close()
				return err
			}
			if _, err := conn.Set(p, []byte("b"), 0); err != nil {
				conn.Close()
				return err
			}
			// An ACL list never used before: a new entry in ZooKeeper's
			// ACL cache, which a snapshot may write before the node.
			acl := append(zk.WorldACL(zk.PermAll), zk.ACL{Perms: zk.PermRead, Scheme: "digest", ID: fmt.Sprintf("u%d-%d-%d:x", w, round, k)})
			if _, err := conn.SetACL(p, acl, 0); err != nil {
				conn.Close()
				return err
			}
			if prev != "" {
				if err := conn.Delete(prev, -1); err != nil {
					conn.Close()
					return err
				}
			}
			prev = p
		}
		if _, err := conn.Multi(
			&zk.CreateRequest{Path: fmt.Sprintf("/fz/m%d-%d", w, round), Data: []byte("m"), Acl: open},
			&zk.DeleteRequest{Path: prev, Version: -1},
		); err != nil {
			conn.Close()
			return err
		}
		conn.Close()
	}
	return nil
}
