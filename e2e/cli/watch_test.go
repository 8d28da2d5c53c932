package cli

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/testing/procs"
	"github.com/zkraft/zkraft/internal/testing/testproc"
)

// watchLine is one text line of zkraft watch.
var watchLine = regexp.MustCompile(`^(NodeCreated|NodeDataChanged|NodeDeleted|NodeChildrenChanged) (\S+) 0x([0-9a-f]+)( \(while away\))?$`)

// watchEvent is a parsed line.
type watchEvent struct {
	typ, path string
	zxid      int64
	away      bool
}

// startWatch starts `zkraft watch args...` and waits for it to say it
// watches.
func startWatch(t *testing.T, args ...string) *lockProc {
	t.Helper()
	p := startProc(t, "watch", args...)
	waitUntil(t, 10*time.Second, "zkraft watch's start", func() bool { return strings.Contains(p.stderr.String(), "watching ") })
	return p
}

// events parses every line printed so far, failing t on one that is no
// event.
func (p *lockProc) events(t *testing.T) []watchEvent {
	t.Helper()
	var evs []watchEvent
	for _, l := range strings.Split(strings.TrimSpace(p.stdout.String()), "\n") {
		if l == "" {
			continue
		}
		m := watchLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("not an event line: %q", l)
		}
		z, _ := strconv.ParseInt(m[3], 16, 64)
		evs = append(evs, watchEvent{m[1], m[2], z, m[4] != ""})
	}
	return evs
}

// waitEvents waits up to 10 s for n events.
func (p *lockProc) waitEvents(t *testing.T, n int) []watchEvent {
	t.Helper()
	waitUntil(t, 10*time.Second, fmt.Sprintf("%d events", n), func() bool { return len(p.events(t)) >= n })
	return p.events(t)
}

// checkEvents compares events with want ("TYPE PATH" each), and checks
// that each zxid is the one want's zxids give (0: any) and that zxids
// do not go down.
func checkEvents(t *testing.T, got []watchEvent, want []string, zxids []int64) {
	t.Helper()
	var lines []string
	for _, e := range got {
		lines = append(lines, e.typ+" "+e.path)
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	for i, e := range got {
		if i < len(zxids) && zxids[i] != 0 && e.zxid != zxids[i] {
			t.Errorf("%s %s at 0x%x, want 0x%x", e.typ, e.path, e.zxid, zxids[i])
		}
		if i > 0 && e.zxid < got[i-1].zxid {
			t.Errorf("zxid 0x%x after 0x%x", e.zxid, got[i-1].zxid)
		}
	}
}

// TestWatchPrintsChangesWithZxids: without --recursive zkraft watch
// prints the node's creation, data change and deletion, and a
// NodeChildrenChanged for each creation and deletion of a child, each at
// the zxid the writer's stats give, in order; a grandchild is not
// followed. SIGTERM ends it with status 0.
func TestWatchPrintsChangesWithZxids(t *testing.T) {
	t.Parallel()
	addr := lockServer(t)
	w := startWatch(t, "--server", addr, "/app")
	conn := procs.ConnectTo(t, addr)
	defer conn.Close()
	acl := zk.WorldACL(zk.PermAll)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err := conn.Create("/app", []byte("v1"), 0, acl)
	must(err)
	w.waitEvents(t, 1)
	_, st, err := conn.Exists("/app")
	must(err)
	created := st.Czxid
	st, err = conn.Set("/app", []byte("v2"), -1)
	must(err)
	changed := st.Mzxid
	w.waitEvents(t, 2)
	_, err = conn.Create("/app/x", nil, 0, acl)
	must(err)
	_, xst, err := conn.Exists("/app/x")
	must(err)
	w.waitEvents(t, 3)
	_, err = conn.Create("/app/x/deep", nil, 0, acl)
	must(err)
	must(conn.Delete("/app/x/deep", -1))
	must(conn.Delete("/app/x", -1))
	w.waitEvents(t, 4)
	_, ast, err := conn.Exists("/app")
	must(err)
	must(conn.Delete("/app", -1))
	_, rst, err := conn.Exists("/")
	must(err)
	got := w.waitEvents(t, 5)
	time.Sleep(300 * time.Millisecond)
	got = w.events(t)
	checkEvents(t, got, []string{"NodeCreated /app", "NodeDataChanged /app", "NodeChildrenChanged /app", "NodeChildrenChanged /app", "NodeDeleted /app"},
		[]int64{created, changed, xst.Czxid, ast.Pzxid, rst.Pzxid})
	for _, e := range got {
		if e.away {
			t.Errorf("%s %s marked away", e.typ, e.path)
		}
	}
	if err := w.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := w.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("exit %d after SIGTERM\n%s", code, w.stderr.String())
	}
}

// TestWatchRecursiveJSON: --recursive -o json sees descendants' creation,
// data changes and deletion (a subtree's nodes each), one JSON document
// a line with the data.
func TestWatchRecursiveJSON(t *testing.T) {
	t.Parallel()
	addr := lockServer(t)
	conn := procs.ConnectTo(t, addr)
	defer conn.Close()
	acl := zk.WorldACL(zk.PermAll)
	if _, err := conn.Create("/r", nil, 0, acl); err != nil {
		t.Fatal(err)
	}
	w := startWatch(t, "--server", addr, "--recursive", "-o", "json", "/r")
	for _, p := range []string{"/r/a", "/r/a/b", "/r/a/b/c"} {
		if _, err := conn.Create(p, []byte("d"+p), 0, acl); err != nil {
			t.Fatal(err)
		}
	}
	// The data of a creation is printed when the read shows that
	// version: wait before changing it.
	waitUntil(t, 10*time.Second, "3 JSON events", func() bool { return strings.Count(w.stdout.String(), "\n") >= 3 })
	if _, err := conn.Set("/r/a/b/c", []byte("new"), -1); err != nil {
		t.Fatal(err)
	}
	type doc struct {
		Type, Path, Zxid string
		Data             *string
		Away             bool
	}
	var docs []doc
	waitUntil(t, 10*time.Second, "4 JSON events", func() bool { return strings.Count(w.stdout.String(), "\n") >= 4 })
	for _, p := range []string{"/r/a/b/c", "/r/a/b", "/r/a"} {
		if err := conn.Delete(p, -1); err != nil {
			t.Fatal(err)
		}
	}
	waitUntil(t, 10*time.Second, "7 JSON events", func() bool { return strings.Count(w.stdout.String(), "\n") >= 7 })
	time.Sleep(300 * time.Millisecond)
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(w.stdout.String()), "\n") {
		var d doc
		if err := json.Unmarshal([]byte(l), &d); err != nil {
			t.Fatalf("not JSON: %q: %v", l, err)
		}
		if !strings.HasPrefix(d.Zxid, "0x") {
			t.Errorf("zxid %q", d.Zxid)
		}
		docs = append(docs, d)
		data := "-"
		if d.Data != nil {
			data = *d.Data
		}
		lines = append(lines, d.Type+" "+d.Path+" "+data)
	}
	want := []string{"NodeCreated /r/a d/r/a", "NodeCreated /r/a/b d/r/a/b", "NodeCreated /r/a/b/c d/r/a/b/c",
		"NodeDataChanged /r/a/b/c new", "NodeDeleted /r/a/b/c -", "NodeDeleted /r/a/b -", "NodeDeleted /r/a -"}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

// TestWatchReportsChangesWhileAway: a watcher stopped (SIGSTOP) past its
// session timeout loses its sessions and its watch; while it is away
// another client creates, changes and deletes nodes. Resumed, it makes a
// new session and prints those changes, marked "(while away)", in zxid
// order, and goes on printing live ones unmarked.
func TestWatchReportsChangesWhileAway(t *testing.T) {
	t.Parallel()
	addr := lockServer(t)
	conn := procs.ConnectTo(t, addr)
	defer conn.Close()
	acl := zk.WorldACL(zk.PermAll)
	for _, p := range []string{"/s", "/s/keep", "/s/gone", "/s/same"} {
		if _, err := conn.Create(p, nil, 0, acl); err != nil {
			t.Fatal(err)
		}
	}
	w := startWatch(t, "--server", addr, "--timeout", "1s", "--recursive", "/s")
	if err := w.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 15*time.Second, "the stopped watcher's watches to go", func() bool {
		return !watched(addr, "/s")
	})
	st, err := conn.Set("/s/keep", []byte("x"), -1)
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.Delete("/s/gone", -1); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Create("/s/new", nil, 0, acl); err != nil {
		t.Fatal(err)
	}
	_, nst, _ := conn.Exists("/s/new")
	if err := w.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	got := w.waitEvents(t, 3)
	checkEvents(t, got, []string{"NodeDataChanged /s/keep", "NodeDeleted /s/gone", "NodeCreated /s/new"},
		[]int64{st.Mzxid, 0, nst.Czxid})
	for _, e := range got {
		if !e.away {
			t.Errorf("%s %s not marked away", e.typ, e.path)
		}
	}
	waitUntil(t, 10*time.Second, "the watch set again", func() bool { return watched(addr, "/s") })
	if _, err := conn.Set("/s/new", []byte("live"), -1); err != nil {
		t.Fatal(err)
	}
	got = w.waitEvents(t, 4)
	if e := got[3]; e.typ != "NodeDataChanged" || e.path != "/s/new" || e.away {
		t.Fatalf("after the reconnect: %+v, want a live NodeDataChanged /s/new", e)
	}
	t.Logf("stdout:\n%s\nstderr:\n%s", w.stdout.String(), w.stderr.String())
}

// TestWatchSkipsUnreadableNode: a child whose ACL refuses READ is
// reported once on stderr; its siblings' changes are still printed.
func TestWatchSkipsUnreadableNode(t *testing.T) {
	t.Parallel()
	addr := lockServer(t)
	conn := procs.ConnectTo(t, addr)
	defer conn.Close()
	acl := zk.WorldACL(zk.PermAll)
	if _, err := conn.Create("/u", nil, 0, acl); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Create("/u/secret", nil, 0, zk.WorldACL(zk.PermAll&^zk.PermRead)); err != nil {
		t.Fatal(err)
	}
	w := startProc(t, "watch", "--server", addr, "-r", "/u")
	waitUntil(t, 10*time.Second, "zkraft watch's start", func() bool { return strings.Contains(w.stderr.String(), "watching ") })
	if _, err := conn.Create("/u/open", []byte("x"), 0, acl); err != nil {
		t.Fatal(err)
	}
	got := w.waitEvents(t, 1)
	checkEvents(t, got, []string{"NodeCreated /u/open"}, nil)
	time.Sleep(1500 * time.Millisecond)
	if n := strings.Count(w.stderr.String(), "not authenticated"); n > 2 {
		t.Fatalf("the refused read reported %d times:\n%s", n, w.stderr.String())
	}
	if !strings.Contains(w.stderr.String(), "/u/secret") {
		t.Fatalf("stderr does not name /u/secret:\n%s", w.stderr.String())
	}
}

// TestWatchReportsChangesAcrossFailover: the follower serving the
// watcher is stopped (SIGSTOP); a client of the leader changes the tree,
// and the watcher, once it notices the silence and reconnects to the
// other follower on the same session, prints that change marked
// "(while away)".
func TestWatchReportsChangesAcrossFailover(t *testing.T) {
	t.Parallel()
	members := procs.StartEnsemble(t, 3, "4lw.commands.whitelist=*")
	leader := procs.LeaderOf(t, members, nil)
	var followers []*procs.Member
	for _, m := range members {
		if m != leader {
			followers = append(followers, m)
		}
	}
	writer := procs.ConnectTo(t, leader.ClientAddr)
	defer writer.Close()
	acl := zk.WorldACL(zk.PermAll)
	if _, err := writer.Create("/f", nil, 0, acl); err != nil {
		t.Fatal(err)
	}
	w := startWatch(t, "--server", followers[0].ClientAddr+","+followers[1].ClientAddr, "--timeout", "4s", "-r", "/f")
	// The watcher names the member its watch session is on; a member's
	// wchp may still list a session whose first connection attempt failed.
	var serving *procs.Member
	for _, m := range followers {
		if strings.Contains(w.stderr.String(), ") from "+m.ClientAddr+"\n") {
			serving = m
		}
	}
	if serving == nil {
		t.Fatalf("the watcher names no follower: %s", w.stderr.String())
	}
	// Stopped, every thread: on a loaded machine a member's threads went on
	// for the create's round trip after kill(2) returned, and the watcher
	// got the event live.
	err := testproc.Stop(serving.Pid(), 10*time.Second)
	defer func() { _ = serving.Cmd.Process.Signal(syscall.SIGCONT) }()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := writer.Create("/f/during", []byte("x"), 0, acl); err != nil {
		t.Fatal(err)
	}
	_, st, err := writer.Exists("/f/during")
	if err != nil {
		t.Fatal(err)
	}
	got := w.waitEvents(t, 1)
	checkEvents(t, got, []string{"NodeCreated /f/during"}, []int64{st.Czxid})
	if !got[0].away {
		t.Errorf("%+v not marked away", got[0])
	}
	t.Logf("stdout:\n%s\nstderr:\n%s", w.stdout.String(), w.stderr.String())
}

// TestWatchBurst: fifty children created, then deleted, as fast as a
// client can are each printed once per change: none is lost or doubled.
func TestWatchBurst(t *testing.T) {
	t.Parallel()
	addr := lockServer(t)
	conn := procs.ConnectTo(t, addr)
	defer conn.Close()
	acl := zk.WorldACL(zk.PermAll)
	if _, err := conn.Create("/b", nil, 0, acl); err != nil {
		t.Fatal(err)
	}
	w := startWatch(t, "--server", addr, "-r", "/b")
	const n = 50
	for i := 0; i < n; i++ {
		if _, err := conn.Create(fmt.Sprintf("/b/n%02d", i), nil, 0, acl); err != nil {
			t.Fatal(err)
		}
	}
	w.waitEvents(t, n) // a node created and deleted between two reads would be unseen
	for i := 0; i < n; i++ {
		if err := conn.Delete(fmt.Sprintf("/b/n%02d", i), -1); err != nil {
			t.Fatal(err)
		}
	}
	got := w.waitEvents(t, 2*n)
	time.Sleep(300 * time.Millisecond)
	got = w.events(t)
	count := map[string]int{}
	for _, e := range got {
		count[e.typ+" "+e.path]++
	}
	for i := 0; i < n; i++ {
		for _, typ := range []string{"NodeCreated", "NodeDeleted"} {
			if k := fmt.Sprintf("%s /b/n%02d", typ, i); count[k] != 1 {
				t.Errorf("%s printed %d times", k, count[k])
			}
		}
	}
	if len(got) != 2*n {
		t.Errorf("%d events, want %d", len(got), 2*n)
	}
}

// TestWatchAuth: a node only user:pw may read is refused (exit 1)
// without credentials, and watched with them from $ZKRAFT_AUTH.
func TestWatchAuth(t *testing.T) {
	t.Parallel()
	addr := lockServer(t)
	conn := procs.ConnectTo(t, addr)
	defer conn.Close()
	acl := append(zk.DigestACL(zk.PermRead, "user", "pw"), zk.WorldACL(zk.PermWrite)...)
	if _, err := conn.Create("/sec", nil, 0, acl); err != nil {
		t.Fatal(err)
	}
	if code := startProc(t, "watch", "--server", addr, "/sec").wait(t, 10*time.Second); code != 1 {
		t.Fatalf("without credentials: exit %d, want 1", code)
	}
	p := startProcEnv(t, []string{"ZKRAFT_AUTH=digest:user:pw"}, "watch", "--server", addr, "/sec")
	waitUntil(t, 10*time.Second, "zkraft watch's start", func() bool { return strings.Contains(p.stderr.String(), "watching ") })
	st, err := conn.Set("/sec", []byte("x"), -1)
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, p.waitEvents(t, 1), []string{"NodeDataChanged /sec"}, []int64{st.Mzxid})
}
