package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// TestSnapshotToZooKeeper is the way back from zkraft to Apache
// ZooKeeper: the AdminServer's snapshot command (ZooKeeper 3.9's, with the
// super user's digest) hands out zkraft's tree as a ZooKeeper snapshot;
// in a new ZooKeeper 3.8's dataDir/version-2 it makes ZooKeeper serve
// every znode with the same data, ACL and Stat (every field), the open
// session's ephemeral included.
func TestSnapshotToZooKeeper(t *testing.T) {
	skipShort(t)
	t.Parallel()
	needJava(t)
	adminPort, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	zr := StartServer(t, ServerOptions{Kind: targetZkraft, ZooCfg: []string{
		"admin.enableServer=true", "admin.serverAddress=127.0.0.1", fmt.Sprintf("admin.serverPort=%d", adminPort),
	}})
	keeper := connect(t, zr, 30*time.Second)
	if _, err := keeper.Create("/mig", []byte("root"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, err := keeper.Create("/mig/eph", []byte("mine"), zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	writeMigrationHistory(t, connect(t, zr, 10*time.Second))
	before := dumpWithACLs(t, superClient(t, zr))

	req, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d/commands/snapshot", adminPort), nil)
	req.Header.Set("Authorization", "digest "+superUser+":"+superPassword)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	snap, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	zxid := strings.TrimPrefix(resp.Header.Get("last_zxid"), "0x")
	if resp.StatusCode != 200 || zxid == "" {
		t.Fatalf("snapshot command: %s, last_zxid %q\n%s", resp.Status, zxid, snap)
	}

	zkSrv, err := newServer(t.TempDir(), ServerOptions{Kind: targetZookeeper})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(zkSrv.dataDir, "version-2")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "snapshot."+zxid), snap, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := zkSrv.Stop(); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			t.Logf("ZooKeeper log:\n%s", zkSrv.LogTail(60))
		}
	})
	if err := zkSrv.Start(); err != nil {
		t.Fatal(err)
	}
	if after := dumpWithACLs(t, superClient(t, zkSrv)); after != before {
		t.Errorf("ZooKeeper serves a different tree from zkraft's snapshot\nzkraft:\n%s\nZooKeeper:\n%s", before, after)
	}
}
