package e2e

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/cli/jsonshape"
)

// adminCommands3_8 are the AdminServer commands both servers answer alike
// (ZooKeeper 3.8's, without the JVM-specific environment, system
// properties and trace masks, and monitor, to which ZooKeeper adds
// hundreds of internal metrics).
var adminCommands3_8 = []string{
	"configuration", "connection_stat_reset", "connections", "dirs", "dump", "hash", "initial_configuration",
	"is_read_only", "last_snapshot", "leader", "observer_connection_stat_reset", "observers", "ruok",
	"server_stats", "stat_reset", "stats", "voting_view", "watch_summary", "watches", "watches_by_path",
	"zabstate", "nosuch",
}

// TestAdminServerAgainstZooKeeper runs zkraft and Apache ZooKeeper with
// their AdminServers on (admin.enableServer, admin.serverAddress,
// admin.serverPort in zoo.cfg), gives each the same session state through
// go-zookeeper (an ephemeral, data, child and exists watches), and
// compares every command's JSON shape (fields and types, and the order of
// the top-level fields, which ZooKeeper fixes), the command listing, and
// monitor's fields (each of zkraft's must be one of ZooKeeper's, with its
// type).
func TestAdminServerAgainstZooKeeper(t *testing.T) {
	skipShort(t)
	t.Parallel()
	needJava(t)
	requireTool(t, needFiles(servletAPIJar))
	admin := map[string]string{}
	for _, kind := range []string{targetZkraft, targetZookeeper} {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		s := StartServer(t, ServerOptions{Kind: kind, ZooCfg: []string{
			"admin.enableServer=true", "admin.serverAddress=127.0.0.1", fmt.Sprintf("admin.serverPort=%d", port)}})
		admin[kind] = fmt.Sprintf("http://127.0.0.1:%d/commands", port)
		c := connect(t, s, sessionTimeout)
		acl := openACL
		for _, p := range []string{"/adm", "/adm/b"} {
			if _, err := c.Create(p, nil, 0, acl); err != nil {
				t.Fatalf("%s: create %s: %v", kind, p, err)
			}
		}
		if _, err := c.Create("/adm/e", []byte("x"), zk.FlagEphemeral, acl); err != nil {
			t.Fatalf("%s: create ephemeral: %v", kind, err)
		}
		if _, _, _, err := c.GetW("/adm"); err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := c.ChildrenW("/adm"); err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := c.ExistsW("/adm/b"); err != nil {
			t.Fatal(err)
		}
	}
	get := func(kind, command string) string {
		t.Helper()
		url := admin[kind]
		if command != "" {
			url += "/" + command
		}
		var resp *http.Response
		var err error
		for range 50 { // ZooKeeper's Jetty may still be starting after its client port is up
			if resp, err = http.Get(url); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("%s: GET %s: %v", kind, url, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: GET %s: %s\n%s", kind, url, resp.Status, b)
		}
		if command != "" && resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %s: Content-Type %q", kind, command, resp.Header.Get("Content-Type"))
		}
		return string(b)
	}
	shape := func(kind, doc string) string {
		t.Helper()
		s, err := jsonshape.OfTopOrdered([]byte(doc))
		if err != nil {
			t.Fatalf("%s: %v\n%s", kind, err, doc)
		}
		return s
	}
	if z, k := get(targetZookeeper, ""), get(targetZkraft, ""); z != k {
		t.Errorf("command listing differs:\nzookeeper:\n%s\nzkraft:\n%s", z, k)
	}
	for _, cmd := range adminCommands3_8 {
		z, k := get(targetZookeeper, cmd), get(targetZkraft, cmd)
		if zs, ks := shape(targetZookeeper, z), shape(targetZkraft, k); zs != ks {
			t.Errorf("%s:\nzookeeper %s\n   zkraft %s\nzookeeper:\n%s\nzkraft:\n%s", cmd, zs, ks, z, k)
		}
	}
	zkMonitor := map[string]string{}
	for _, line := range strings.Split(get(targetZookeeper, "monitor"), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), " : "); ok {
			zkMonitor[k] = shape(targetZookeeper, strings.TrimSuffix(v, ","))
		}
	}
	for _, line := range strings.Split(get(targetZkraft, "mntr"), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), " : "); ok {
			if want, got := zkMonitor[k], shape(targetZkraft, strings.TrimSuffix(v, ",")); want != got {
				t.Errorf("monitor field %s: zkraft %s, ZooKeeper %q", k, got, want)
			}
		}
	}
}
