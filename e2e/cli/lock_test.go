package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/cli/fourletter"
	"github.com/zkraft/zkraft/internal/testing/procs"
)

// lockServer starts a standalone zkraft with a short tick (sessions of
// 1 s and up) and every four-letter word, and returns its address.
func lockServer(t *testing.T) string {
	t.Helper()
	addr := procs.FreeAddr(t)
	procs.StartServer(t, addr, "--client-addr", addr, "--data-dir", filepath.Join(t.TempDir(), "data"),
		"--tick-time", "500ms", "--4lw-whitelist", "*")
	return addr
}

// TestLockExcludesRunsAndReleases: a holder excludes a second zkraft
// lock (which gives up at --timeout with 75), a waiter runs its command
// once the holder lets go, with a larger fencing token in its
// environment, exits with the command's status, and leaves no node.
func TestLockExcludesRunsAndReleases(t *testing.T) {
	t.Parallel()
	addr := lockServer(t)
	holder := startLock(t, "--server", addr, "/locks/a")
	first := holder.token(t)

	if code := startLock(t, "--server", addr, "--timeout", "500ms", "/locks/a", "--", "true").wait(t, 10*time.Second); code != 75 {
		t.Fatalf("--timeout 500ms while held: exit %d, want 75", code)
	}
	waiter := startLock(t, "--server", addr, "/locks/a", "--", "sh", "-c", `echo "env=$ZKRAFT_FENCING_TOKEN"; exit 7`)
	time.Sleep(500 * time.Millisecond)
	if waiter.exited() {
		t.Fatalf("the waiter ran while the lock was held: %s", waiter.stdout.String())
	}
	holder.stdin.Close()
	if code := holder.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("holder: exit %d on stdin's end\n%s", code, holder.stderr.String())
	}
	if code := waiter.wait(t, 10*time.Second); code != 7 {
		t.Fatalf("waiter: exit %d, want CMD's 7\n%s", code, waiter.stderr.String())
	}
	second, _ := tokenIn(waiter.stderr.String())
	m := regexp.MustCompile(`env=(\d+)`).FindStringSubmatch(waiter.stdout.String())
	if m == nil || m[1] != strconv.FormatInt(second, 10) {
		t.Fatalf("ZKRAFT_FENCING_TOKEN: %q, printed token %d", waiter.stdout.String(), second)
	}
	if second <= first {
		t.Fatalf("tokens %d then %d: want them to grow", first, second)
	}
	conn := procs.ConnectTo(t, addr)
	defer conn.Close()
	if kids, _, err := conn.Children("/locks/a"); err != nil || len(kids) != 0 {
		t.Fatalf("after release: %v %v, want no nodes", kids, err)
	}
}

// TestLockHoldsUntilSignal: without CMD, SIGTERM ends the hold, exit 0,
// and the node is gone.
func TestLockHoldsUntilSignal(t *testing.T) {
	t.Parallel()
	addr := lockServer(t)
	p := startLock(t, "--server", addr, "-o", "json", "/locks/sig")
	waitUntil(t, 10*time.Second, "the token in JSON", func() bool { return strings.Contains(p.stdout.String(), `"token":`) })
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("exit %d after SIGTERM\n%s", code, p.stderr.String())
	}
	conn := procs.ConnectTo(t, addr)
	defer conn.Close()
	if kids, _, _ := conn.Children("/locks/sig"); len(kids) != 0 {
		t.Fatalf("after SIGTERM: %v left", kids)
	}
}

// TestLockWatchesOnlyItsPredecessor: behind two kazoo-named contenders
// zkraft lock watches the second alone, keeps waiting when the first
// goes, and takes the lock when the second goes.
func TestLockWatchesOnlyItsPredecessor(t *testing.T) {
	t.Parallel()
	addr := lockServer(t)
	conn := procs.ConnectTo(t, addr)
	defer conn.Close()
	acl := zk.WorldACL(zk.PermAll)
	for _, p := range []string{"/locks", "/locks/w"} {
		if _, err := conn.Create(p, nil, 0, acl); err != nil {
			t.Fatal(err)
		}
	}
	var nodes []string
	for i := 0; i < 2; i++ {
		n, err := conn.Create("/locks/w/0123abcd__lock__", nil, zk.FlagEphemeral|zk.FlagSequence, acl)
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, n)
	}
	p := startLock(t, "--server", addr, "/locks/w", "--", "true")
	waitUntil(t, 10*time.Second, "watch on "+nodes[1], func() bool {
		return strings.Contains(fourletter.Ask(addr, "wchp"), nodes[1])
	})
	if w := fourletter.Ask(addr, "wchp"); strings.Contains(w, nodes[0]) {
		t.Fatalf("a watch on %s, not the predecessor:\n%s", nodes[0], w)
	}
	if err := conn.Delete(nodes[0], -1); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if p.exited() {
		t.Fatalf("took the lock while %s was before it", nodes[1])
	}
	if err := conn.Delete(nodes[1], -1); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("exit %d\n%s", code, p.stderr.String())
	}
}

// TestLockStopsCommandWhenSessionLost: zkraft lock stopped past its
// session timeout loses the session, whose node goes with it; resumed,
// it SIGTERMs CMD (which ignores it), SIGKILLs it after --grace, and
// exits 70.
func TestLockStopsCommandWhenSessionLost(t *testing.T) {
	t.Parallel()
	addr := lockServer(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	p := startLock(t, "--server", addr, "--session-timeout", "1s", "--grace", "500ms", "/locks/s", "--",
		"sh", "-c", `echo $$ > `+pidFile+`; trap '' TERM; while :; do sleep 0.1; done`)
	p.token(t)
	var pid int
	waitUntil(t, 10*time.Second, "CMD's pid", func() bool {
		b, _ := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return pid > 0
	})
	conn := procs.ConnectTo(t, addr)
	defer conn.Close()
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 15*time.Second, "expiry of the stopped holder's node", func() bool {
		kids, _, err := conn.Children("/locks/s")
		return err == nil && len(kids) == 0
	})
	if err := p.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 15*time.Second); code != 70 {
		t.Fatalf("exit %d after the session was lost, want 70\n%s", code, p.stderr.String())
	}
	waitUntil(t, 5*time.Second, "CMD's end", func() bool { return syscall.Kill(pid, 0) != nil })
	if !strings.Contains(p.stderr.String(), "lock lost") {
		t.Fatalf("stderr: %s", p.stderr.String())
	}
}

// TestLockTokenGrowsAcrossLeaderChange: the fencing token taken after
// the leader of three members is killed is larger than the one before.
func TestLockTokenGrowsAcrossLeaderChange(t *testing.T) {
	t.Parallel()
	members := procs.StartEnsemble(t, 3)
	servers := strings.Join(procs.ClientAddrs(members), ",")
	first := startLock(t, "--server", servers, "/locks/f", "--", "true")
	if code := first.wait(t, 20*time.Second); code != 0 {
		t.Fatalf("exit %d\n%s", code, first.stderr.String())
	}
	before, _ := tokenIn(first.stderr.String())
	leader := procs.LeaderOf(t, members, nil)
	leader.Kill()
	procs.LeaderOf(t, members, leader)
	var rest []string
	for _, m := range members {
		if m != leader {
			rest = append(rest, m.ClientAddr)
		}
	}
	second := startLock(t, "--server", strings.Join(rest, ","), "/locks/f", "--", "true")
	if code := second.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("exit %d after the leader change\n%s", code, second.stderr.String())
	}
	after, _ := tokenIn(second.stderr.String())
	t.Logf("tokens %d, then %d after leader %d was killed", before, after, leader.ID)
	if before == 0 || after <= before {
		t.Fatalf("tokens %d then %d across a leader change: want them to grow", before, after)
	}
}

// TestLockStopsCommandWhenServerDies: with its only server gone, zkraft
// lock counts the session lost once disconnected for longer than the
// session timeout, SIGTERMs CMD and exits 70 without waiting on a
// release no server can answer.
func TestLockStopsCommandWhenServerDies(t *testing.T) {
	t.Parallel()
	addr := procs.FreeAddr(t)
	server := procs.StartServer(t, addr, "--client-addr", addr, "--data-dir", filepath.Join(t.TempDir(), "data"), "--tick-time", "500ms")
	p := startLock(t, "--server", addr, "--session-timeout", "1s", "--grace", "5s", "/locks/d", "--", "sleep", "60")
	p.token(t)
	start := time.Now()
	if err := server.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 15*time.Second); code != 70 {
		t.Fatalf("exit %d with the server gone, want 70\n%s", code, p.stderr.String())
	}
	t.Logf("exited %v after the server was killed\n%s", time.Since(start), p.stderr.String())
}
