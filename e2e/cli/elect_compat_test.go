package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/procs"
)

// electRival is another library's election client (proposal "rival"):
// it campaigns, awaits(within) says whether it leads, resign ends its
// leadership or campaign.
type electRival struct {
	campaign, resign func()
	await            func(within time.Duration) bool
}

// lineRival drives a lineClient speaking campaign/await/resign; await's
// argument is in the unit scale gives (seconds or milliseconds).
func lineRival(t *testing.T, c *lineClient, scale func(time.Duration) string) electRival {
	return electRival{
		campaign: func() { c.say(t, "campaign") },
		await:    func(d time.Duration) bool { return c.say(t, "await "+scale(d)) == "LEADER" },
		resign:   func() { c.say(t, "resign") },
	}
}

// checkElection: while the rival leads, zkraft elect waits and --listen
// shows the rival's proposal; once the rival resigns zkraft elect leads
// and runs CMD. Then, when both is set, zkraft elect (with flags) leads
// and the rival waits until it ends.
func checkElection(t *testing.T, addr, path string, rival electRival, both bool, flags ...string) {
	t.Helper()
	listener := startElect(t, "--server", addr, "--listen", path)
	waitLines(t, listener, "(no leader)")
	rival.campaign()
	if !rival.await(10 * time.Second) {
		t.Fatal("the rival was not elected alone")
	}
	waitLines(t, listener, "(no leader)", "rival")
	// Its CMD leads for a second: a leadership that ends before the
	// listener reads the new leader's node is not printed (one ended by
	// "true" was missed under a second make test).
	waiter := startElect(t, append(append([]string{"--server", addr}, flags...), path, "zk", "--", "sleep", "1")...)
	// Its candidate node must exist before the rival resigns, or the
	// listener rightly sees nobody lead in between.
	awaitCandidates(t, addr, path, 2)
	if waiter.exited() {
		t.Fatalf("zkraft elect led while the rival did\n%s", waiter.stderr.String())
	}
	rival.resign()
	if code := waiter.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("zkraft elect after the rival resigned: exit %d\n%s", code, waiter.stderr.String())
	}
	waitLines(t, listener, "(no leader)", "rival", "zk", "(no leader)")
	if !both {
		return
	}
	holder := startElect(t, append(append([]string{"--server", addr}, flags...), path, "zk2")...)
	holder.token(t)
	rival.campaign()
	if rival.await(time.Second) {
		t.Fatal("the rival led while zkraft elect did")
	}
	holder.stdin.Close()
	if code := holder.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("holder: exit %d", code)
	}
	if !rival.await(10 * time.Second) {
		t.Fatal("the rival was not elected once zkraft elect ended")
	}
	waitLines(t, listener, "(no leader)", "rival", "zk", "(no leader)", "zk2", "rival")
	rival.resign()
}

// TestElectWithKazoo: kazoo's Election and zkraft elect --kazoo take
// turns both ways; without --kazoo, zkraft elect still waits for kazoo
// (kazoo's Election does not see LeaderLatch-named nodes, the other way).
func TestElectWithKazoo(t *testing.T) {
	t.Parallel()
	requireKazoo(t)
	addr := lockServer(t)
	script, _ := filepath.Abs(filepath.Join("testdata", "elect", "kazoo_elect.py"))
	seconds := func(d time.Duration) string { return fmt.Sprintf("%g", d.Seconds()) }
	t.Run("kazoo-names", func(t *testing.T) {
		k := startLineClient(t, kazooPython, script, addr, "/election/kazoo", "rival")
		checkElection(t, addr, "/election/kazoo", lineRival(t, k, seconds), true, "--kazoo")
	})
	t.Run("latch-names", func(t *testing.T) {
		k := startLineClient(t, kazooPython, script, addr, "/election/kazoo2", "rival")
		checkElection(t, addr, "/election/kazoo2", lineRival(t, k, seconds), false)
	})
}

// TestElectWithCurator: Curator's LeaderLatch and zkraft elect take
// turns both ways.
func TestElectWithCurator(t *testing.T) {
	t.Parallel()
	_, java := procs.JavaTools(t)
	src, _ := filepath.Abs(filepath.Join("testdata", "elect", "CuratorLatch.java"))
	classes := procs.CompileJava(t, procs.CuratorClassPath, src)
	addr := lockServer(t)
	args := append(append([]string{}, procs.JVMFlags...), "-cp", strings.Join(append([]string{classes}, procs.CuratorClassPath...), ":"),
		"CuratorLatch", addr, "/election/curator", "rival")
	c := startLineClient(t, java, args...)
	millis := func(d time.Duration) string { return fmt.Sprint(d.Milliseconds()) }
	checkElection(t, addr, "/election/curator", lineRival(t, c, millis), true)
}

// awaitCandidates waits until path has n children (candidates' nodes).
func awaitCandidates(t *testing.T, addr, path string, n int) {
	t.Helper()
	conn := procs.ConnectTo(t, addr)
	defer conn.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		kids, _, err := conn.Children(path)
		if err == nil && len(kids) >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: candidates %v (%v), want %d", path, kids, err, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
