//go:build linux

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/benchcluster"
	"github.com/zkraft/zkraft/internal/testing/procs"
	"github.com/zkraft/zkraft/internal/testing/testenv"
	"github.com/zkraft/zkraft/internal/testing/testproc"
)

// TestMakeOverloadEndToEnd is `make overload` in small: every class on
// both servers (the sessions in worker processes of 100), the Markdown
// with a ratio wherever both servers have a figure, and nothing left
// running or on disk afterwards.
func TestMakeOverloadEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts eight ensembles")
	}
	testenv.Require(t, benchcluster.ZooKeeperMissing())
	dir := t.TempDir()
	zkraft, overload := filepath.Join(dir, "zkraft"), filepath.Join(dir, "overload")
	for _, b := range []struct{ out, pkg string }{{zkraft, "../../cmd/zkraft"}, {overload, "."}} {
		// go test puts its own GOROOT/bin first on PATH.
		args := []string{"build", "-o", b.out}
		if b.out == zkraft {
			args = append(args, testenv.BuildFlags()...)
		}
		if out, err := exec.Command("go", append(args, b.pkg)...).CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", b.pkg, err, out)
		}
	}
	tmp, md := t.TempDir(), filepath.Join(dir, "overload.md")
	// Sessions of 10 s: a client gives up after 2/3 of it without a byte
	// from the server, and with 6 s ZooKeeper's JVMs, starved beside the
	// rest of make test, left some of the storm's sessions unopened (4 s).
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := testproc.CommandContext(ctx, overload, "-dir", tmp, "-zkraft", zkraft, "-out", md, "-per-worker", "100",
		"-herd", "150", "-herd-rounds", "1", "-storm", "150", "-table", "150", "-table-settle", "0s",
		"-overload-time", "2s", "-capacity-time", "3s", "-overload-sessions", "8", "-overload-idle", "20",
		"-session-timeout", "10s", "-jit-warmup", "0s",
		// ZooKeeper's log at INFO: its elections, should one be slow.
		"-zk-jvm-flags", strings.Join(append(procs.JVMFlags, "-Dorg.slf4j.simpleLogger.defaultLogLevel=info"), " "))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("overload: %v\n%s", err, out.String())
	}
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	table := string(b)
	for _, row := range []string{"| herd, 150 watchers | write → last re-read", "| reconnect storm, 150 sessions | kill -9 of the leader → every session resumed",
		"| overload | throughput with 3x the capacity offered", "| connection table, 150 idle sessions | resident memory per session",
		"The overload on ZooKeeper 3.8, second by second", "The overload on zkraft, second by second"} {
		if !strings.Contains(table, row) {
			t.Errorf("the Markdown has no %q:\n%s", row, table)
		}
	}
	// Every row whose figure has a direction and both servers' values
	// has a ratio; counts have none.
	// A reference that never recovered (its figure "never" or "unknown")
	// is reported, not a failed run: its rows have no ratio.
	directed := regexp.MustCompile(`(?m)^\| [^|]+ \| [^|]+ \| [^|–]+ \| [^|]+ \| \*\*[0-9.]+x\*\* \((lower|higher) is better\) \|$`)
	unrecovered := regexp.MustCompile(`(?m)^\| [^|]+ \| [^|]+ \| (never|unknown) \| [^|]+ \| +\|$`)
	if n, m := len(directed.FindAllString(table, -1)), len(unrecovered.FindAllString(table, -1)); n+m < 20 {
		t.Errorf("%d rows with a ratio and %d where ZooKeeper never recovered, want at least 20 in all:\n%s", n, m, table)
	} else if m > 0 {
		t.Logf("%d rows where ZooKeeper never recovered:\n%s", m, table)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		left := benchcluster.ProcessesUnder(tmp)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			for pid, cmd := range left {
				t.Errorf("still running after overload exited: %s", cmd)
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			break
		}
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "overload*")); len(left) > 0 {
		t.Errorf("left in the temporary directory: %v", left)
	}
}
