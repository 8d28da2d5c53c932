package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/testing/procs"
	"github.com/zkraft/zkraft/internal/zookeeper/snapfile"
)

// TestSnapshotSaveInspectRestore is the backup and restore of a
// three-member ensemble: save refused without credentials and done with
// the super user's from a follower; inspect's table and JSON; a damaged
// copy refused by inspect and restore; restore refused over a member's
// data; then a new three-member ensemble restored from the file serves
// the same tree with the same Stats, keeps the snapshot's session until
// it times out, and goes on from the snapshot's zxid.
func TestSnapshotSaveInspectRestore(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts six server processes")
	}
	old := procs.StartEnsemble(t, 3, "superDigest="+procs.SuperDigest, "admin.rateLimiterIntervalInMS=0")
	leader := procs.LeaderOf(t, old, nil)
	c, _, err := zk.Connect([]string{leader.ClientAddr}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	procs.WriteAppTree(t, c, bytes.Repeat([]byte("x"), 100))
	open := zk.WorldACL(zk.PermAll)
	if _, err := c.Create("/secret", []byte("s"), 0, zk.DigestACL(zk.PermAll, "user", "pw")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateContainer("/locks", nil, zk.FlagContainer, open); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create("/locks/held", nil, 0, open); err != nil {
		t.Fatal(err)
	}
	// A session holding an ephemeral, open while the snapshot is taken.
	holder, _, err := zk.Connect([]string{leader.ClientAddr}, 6*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if _, err := holder.Create("/svc/worker-1", []byte("up"), zk.FlagEphemeral, open); err != nil {
		t.Fatal(err)
	}
	want := procs.DumpTree(t, leader.ClientAddr, "/zookeeper/config")

	var follower *procs.Member
	for _, m := range old {
		if m != leader {
			follower = m
		}
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "backup.snap")
	_, errOut, ok := procs.RunSplit(t, []string{"ZKRAFT_AUTH="}, "snapshot", "save", "--admin-addr", follower.AdminAddr, file)
	if ok || !strings.Contains(errOut, "--auth") {
		t.Fatalf("save without credentials: ok=%v, stderr %q (want a refusal naming --auth)", ok, errOut)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("a refused save left %d files", len(entries))
	}
	// With "/" open to anyone, any credentials hold every permission on
	// it; without ADMIN for world, a user's do not.
	if _, err := c.SetACL("/", zk.WorldACL(zk.PermAll&^zk.PermAdmin), -1); err != nil {
		t.Fatal(err)
	}
	_, errOut, ok = procs.RunSplit(t, nil, "snapshot", "save", "--admin-addr", follower.AdminAddr, "--auth", "digest:user:pw", file)
	if ok || !strings.Contains(errOut, "403 Forbidden") || !strings.Contains(errOut, "lack a permission on /") {
		t.Fatalf("save with credentials lacking ADMIN on /: ok=%v, stderr %q", ok, errOut)
	}
	want = procs.DumpTree(t, leader.ClientAddr, "/zookeeper/config")
	out, errOut, ok := procs.RunSplit(t, nil, "snapshot", "save", "--admin-addr", follower.AdminAddr, "--auth", "digest:super:secret", file)
	if !ok {
		t.Fatalf("save: %s", errOut)
	}
	f, err := snapfile.Read(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"saved           " + file, "zxid            " + f.Meta.Zxid.String(), fmt.Sprintf("znodes          %d", f.Meta.Znodes), "sessions        "} {
		if !strings.Contains(out, w) {
			t.Errorf("save's report lacks %q:\n%s", w, out)
		}
	}
	if n := strings.Count(want, "\n") + 1; f.Meta.Znodes != n { // + /zookeeper/config
		t.Errorf("snapshot of %d znodes, the tree has %d", f.Meta.Znodes, n)
	}
	// The same file, with credentials from the environment.
	if _, errOut, ok := procs.RunSplit(t, []string{"ZKRAFT_AUTH=super:secret"}, "snapshot", "save", "--admin-addr", follower.AdminAddr, file); !ok {
		t.Fatalf("save with ZKRAFT_AUTH: %s", errOut)
	}

	// inspect, as a table and as JSON.
	out, errOut, ok = procs.RunSplit(t, nil, "snapshot", "inspect", file)
	if !ok {
		t.Fatalf("inspect: %s", errOut)
	}
	for _, w := range []string{"znodes         ", "1 ephemeral, 1 container, 0 TTL", "LARGEST SUBTREES BY BYTES", "/app/jobs  ", "EPHEMERALS BY SESSION", "/svc/worker-1"} {
		if !strings.Contains(out, w) {
			t.Errorf("inspect's table lacks %q:\n%s", w, out)
		}
	}
	out, errOut, ok = procs.RunSplit(t, nil, "snapshot", "inspect", file, "-o", "json")
	var r snapfile.Report
	if err := json.Unmarshal([]byte(out), &r); !ok || err != nil {
		t.Fatalf("inspect -o json: %v %s\n%s", err, errOut, out)
	}
	if r.Znodes != f.Meta.Znodes || r.Ephemerals != 1 || r.Containers != 1 || r.Zxid != f.Meta.Zxid ||
		len(r.ByBytes) == 0 || r.ByBytes[0].Path != "/app" || r.ByZnodes[0].Path != "/app" ||
		len(r.EphemeralsBySession) != 1 || r.EphemeralsBySession[0].Paths[0] != "/svc/worker-1" ||
		r.EphemeralsBySession[0].Session != snapfile.Zxid(holder.SessionID()) {
		t.Errorf("inspect -o json: %+v", r)
	}

	// A damaged copy is refused by inspect and by restore.
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x01
	damaged := filepath.Join(dir, "damaged.snap")
	if err := os.WriteFile(damaged, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, ok := procs.RunSplit(t, nil, "snapshot", "inspect", damaged); ok || !strings.Contains(errOut, "damaged snapshot file") {
		t.Errorf("inspect of a damaged file: ok=%v %q", ok, errOut)
	}
	if _, errOut, ok := procs.RunSplit(t, nil, "snapshot", "restore", damaged, "--data-dir", filepath.Join(dir, "d")); ok || !strings.Contains(errOut, "damaged snapshot file") {
		t.Errorf("restore of a damaged file: ok=%v %q", ok, errOut)
	}
	// Over a running member's data directory, and over a stopped one's.
	if _, errOut, ok := procs.RunSplit(t, nil, "snapshot", "restore", file, "--config", old[0].CfgPath); ok || !strings.Contains(errOut, "in use by another zkraft, pid") {
		t.Errorf("restore over a running member's data: ok=%v %q", ok, errOut)
	}
	stopped := filepath.Join(dir, "stopped")
	if _, errOut, ok := procs.RunSplit(t, nil, "snapshot", "restore", file, "--data-dir", stopped); !ok {
		t.Fatalf("restore into a new directory: %s", errOut)
	}
	if _, errOut, ok := procs.RunSplit(t, nil, "snapshot", "restore", file, "--data-dir", stopped); ok || !strings.Contains(errOut, "is not empty (raft.db, snapshots)") {
		t.Errorf("restore over a restored member's data: ok=%v %q", ok, errOut)
	}
	// A failed restore (the damaged file above, into its own directory)
	// leaves nothing that stops the next one.
	if _, errOut, ok := procs.RunSplit(t, nil, "snapshot", "restore", file, "--data-dir", filepath.Join(dir, "d")); !ok {
		t.Errorf("restore after a refused one: %s", errOut)
	}

	// A new ensemble from the file, each member restored with its zoo.cfg.
	restored := procs.StartPreparedEnsemble(t, 3, func(m *procs.Member) {
		if _, errOut, ok := procs.RunSplit(t, nil, "snapshot", "restore", file, "--config", m.CfgPath); !ok {
			t.Fatalf("member %d: restore: %s", m.ID, errOut)
		}
	}, "superDigest="+procs.SuperDigest)
	for _, m := range restored {
		if got := procs.DumpTree(t, m.ClientAddr, "/zookeeper/config"); got != want {
			t.Fatalf("restored member %d serves another tree:\n%s\nthe saved ensemble's:\n%s", m.ID, got, want)
		}
	}
	// The membership is the new ensemble's.
	rc, _, err := zk.Connect([]string{restored[0].ClientAddr}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		cfg, _, err := rc.Get("/zookeeper/config")
		if err == nil && strings.Contains(string(cfg), restored[0].ClientAddr) && !strings.Contains(string(cfg), old[0].ClientAddr) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("restored /zookeeper/config: %q %v", cfg, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	st, err := rc.Set("/app/cfg", []byte("after"), -1)
	if err != nil || st.Mzxid <= int64(f.Meta.Zxid) || st.Version != 4 {
		t.Fatalf("write after the restore: %+v %v, want version 4 at a zxid after %s", st, err, f.Meta.Zxid)
	}
	// The snapshot's session times out in the new ensemble (its clients
	// are the old ensemble's), and its ephemeral goes with it.
	deadline = time.Now().Add(30 * time.Second)
	for {
		ok, _, err := rc.Exists("/svc/worker-1")
		if err == nil && !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the restored session's ephemeral is still there: %v %v", ok, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if ok, _, err := holder.Exists("/svc/worker-1"); err != nil || !ok {
		t.Errorf("the saved ensemble lost its ephemeral: %v %v", ok, err)
	}
}
