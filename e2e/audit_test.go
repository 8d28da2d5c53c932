package e2e

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// TestAuditLog runs the same writes against zkraft and Apache ZooKeeper
// 3.8, both with audit.enable=true, and expects the same audit events in
// the same order: creates of every mode (sequential ones named), setData,
// setAcl with ZooKeeper's ACL rendering, deletes, failures with the
// requested path, a multi's operations one by one and a failed multi as
// multiOperation, no event for createTTL (ZooKeeper 3.8 audits it only
// inside a multi), the users of a digest-authenticated session, and the
// ephemeral deleted when its session closes.
func TestAuditLog(t *testing.T) {
	skipShort(t)
	t.Parallel()
	needJava(t)
	servers := map[string]*Server{}
	for _, kind := range []string{targetZkraft, targetZookeeper} {
		servers[kind] = StartServer(t, ServerOptions{Kind: kind, ZooCfg: []string{"audit.enable=true"}, ZKLog: true})
	}
	open := zk.WorldACL(zk.PermAll)
	for _, kind := range []string{targetZkraft, targetZookeeper} {
		c := connect(t, servers[kind], 10*time.Second)
		if err := c.AddAuth("digest", []byte("alice:secret")); err != nil {
			t.Fatal(err)
		}
		must := func(_ any, err error) {
			t.Helper()
			if err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
		}
		must(c.Create("/a", []byte("v"), 0, open))
		seq, err := c.Create("/a/s-", nil, zk.FlagSequence, open)
		must(seq, err)
		must(c.Create("/a/e", nil, zk.FlagEphemeral, open))
		must(c.CreateContainer("/c", nil, zk.FlagContainer, open))
		must(c.CreateTTL("/ttl", nil, zk.FlagTTL, open, time.Hour))
		must(c.Set("/a", []byte("w"), -1))
		must(c.SetACL("/a", append(zk.WorldACL(zk.PermRead), zk.DigestACL(zk.PermAll, "alice", "secret")...), -1))
		must(nil, c.Delete(seq, -1))
		_, _ = c.Create("/a", nil, 0, open) // NodeExists
		_ = c.Delete("/nope", -1)           // NoNode
		_, _ = c.Set("/a", nil, 7)          // BadVersion
		must(c.Multi(
			&zk.CreateRequest{Path: "/m", Data: []byte("1"), Acl: open},
			&zk.CreateRequest{Path: "/m/q-", Acl: open, Flags: zk.FlagSequence},
			&zk.SetDataRequest{Path: "/m", Data: []byte("2"), Version: -1},
			&zk.CheckVersionRequest{Path: "/m", Version: 1},
		))
		_, _ = c.Multi(&zk.CreateRequest{Path: "/m2", Acl: open}, &zk.DeleteRequest{Path: "/nope", Version: -1})
		c.Close()
	}
	// The ephemeral's deletion is logged when the close is applied, the
	// last event of each run: wait for it rather than for a fixed time.
	events := map[string]string{}
	for kind, s := range servers {
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			events[kind] = auditEvents(t, s)
			if strings.Contains(events[kind], "operation=ephemeralZNodeDeletionOnSessionCloseOrExpire") || time.Now().After(deadline) {
				break
			}
		}
	}
	if events[targetZkraft] != events[targetZookeeper] {
		t.Errorf("audit events differ\nzookeeper:\n%s\nzkraft:\n%s", events[targetZookeeper], events[targetZkraft])
	}
	for _, want := range []string{"operation=serverStart", "user=alice,127.0.0.1\tip=127.0.0.1\toperation=create\tznode=/a/s-0000000000\tznode_type=persistent_sequential",
		"operation=multiOperation\tresult=failure", "operation=ephemeralZNodeDeletionOnSessionCloseOrExpire\tznode=/a/e"} {
		if !strings.Contains(events[targetZkraft], want) {
			t.Errorf("zkraft's audit log lacks %q:\n%s", want, events[targetZkraft])
		}
	}
}

var sessionHex = regexp.MustCompile(`session=0x[0-9a-f]+`)

// auditEvents extracts the audit events from a server's log, in order,
// session ids replaced by S: zkraft's logger "audit" and ZooKeeper's
// Slf4jAuditLogger (slf4j-simple: "... Slf4jAuditLogger - <event>").
func auditEvents(t *testing.T, s *Server) string {
	t.Helper()
	b, err := os.ReadFile(s.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		var ev string
		switch {
		case strings.Contains(line, "Slf4jAuditLogger - "):
			_, ev, _ = strings.Cut(line, "Slf4jAuditLogger - ")
		case strings.Contains(line, "\taudit\t"):
			_, rest, _ := strings.Cut(line, "\taudit\t")
			if i := strings.Index(rest, "\t"); i >= 0 { // after the caller
				ev = rest[i+1:]
			}
		default:
			continue
		}
		out = append(out, sessionHex.ReplaceAllString(strings.TrimSpace(ev), "session=S"))
	}
	return strings.Join(out, "\n")
}
