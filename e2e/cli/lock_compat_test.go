package cli

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/procs"
	"github.com/zkraft/zkraft/internal/testing/testenv"
)

// kazooPython is Debian's python3, which python3-kazoo is installed for.
const kazooPython = "/usr/bin/python3"

// requireKazoo fails t (skips it outside CI) without python3-kazoo.
func requireKazoo(t *testing.T) {
	t.Helper()
	if out, err := exec.Command(kazooPython, "-c", "import kazoo").CombinedOutput(); err != nil {
		testenv.Require(t, err)
		t.Fatalf("python3-kazoo: %s", out)
	}
}

// lockRival is another library's lock client: acquire(within) says
// whether it got the lock; release lets go.
type lockRival struct {
	acquire func(within time.Duration) bool
	release func()
}

// checkExclusion: the rival holding excludes zkraft lock (which gives
// up at --timeout, then takes the lock once the rival lets go), and
// zkraft lock holding excludes the rival until it ends.
func checkExclusion(t *testing.T, addr, path string, rival lockRival) {
	t.Helper()
	if !rival.acquire(10 * time.Second) {
		t.Fatal("the rival did not get a free lock")
	}
	if code := startLock(t, "--server", addr, "--timeout", "500ms", path, "--", "true").wait(t, 10*time.Second); code != 75 {
		t.Fatalf("zkraft lock while the rival holds: exit %d, want 75", code)
	}
	waiter := startLock(t, "--server", addr, path, "--", "true")
	time.Sleep(500 * time.Millisecond)
	if waiter.exited() {
		t.Fatal("zkraft lock ran while the rival held the lock")
	}
	rival.release()
	if code := waiter.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("zkraft lock after the rival let go: exit %d\n%s", code, waiter.stderr.String())
	}

	holder := startLock(t, "--server", addr, path)
	holder.token(t)
	if rival.acquire(time.Second) {
		t.Fatal("the rival got the lock zkraft lock holds")
	}
	holder.stdin.Close()
	if code := holder.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("holder: exit %d", code)
	}
	if !rival.acquire(10 * time.Second) {
		t.Fatal("the rival did not get the lock zkraft lock let go")
	}
	rival.release()
}

// TestLockExcludesKazoo: kazoo's Lock (given extra_lock_patterns
// ["-lock-"], its option for Curator-named contenders) and zkraft lock
// exclude each other both ways.
func TestLockExcludesKazoo(t *testing.T) {
	t.Parallel()
	requireKazoo(t)
	addr := lockServer(t)
	script, _ := filepath.Abs(filepath.Join("testdata", "lock", "kazoo_lock.py"))
	k := startLineClient(t, kazooPython, script, addr, "/locks/kazoo", "-lock-")
	checkExclusion(t, addr, "/locks/kazoo", lockRival{
		acquire: func(d time.Duration) bool {
			return k.say(t, fmt.Sprintf("acquire %g", d.Seconds())) == "GOT"
		},
		release: func() { k.say(t, "release") },
	})
}

// TestLockExcludesCurator: Curator's InterProcessMutex and zkraft lock
// exclude each other both ways.
func TestLockExcludesCurator(t *testing.T) {
	t.Parallel()
	_, java := procs.JavaTools(t)
	src, _ := filepath.Abs(filepath.Join("testdata", "lock", "CuratorLock.java"))
	classes := procs.CompileJava(t, procs.CuratorClassPath, src)
	addr := lockServer(t)
	args := append(append([]string{}, procs.JVMFlags...), "-cp", strings.Join(append([]string{classes}, procs.CuratorClassPath...), ":"),
		"CuratorLock", addr, "/locks/curator")
	c := startLineClient(t, java, args...)
	checkExclusion(t, addr, "/locks/curator", lockRival{
		acquire: func(d time.Duration) bool { return c.say(t, fmt.Sprintf("acquire %d", d.Milliseconds())) == "GOT" },
		release: func() { c.say(t, "release") },
	})
}
