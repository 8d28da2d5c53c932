//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
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

// needZooKeeper skips t without Java and Debian's ZooKeeper jars, except
// under CI=true, where `make bench`'s own test must run.
func needZooKeeper(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: starts two ensembles")
	}
	testenv.Require(t, benchcluster.ZooKeeperMissing())
}

// buildBoth builds zkraft and benchcompare into dir.
func buildBoth(t *testing.T, dir string) (zkraft, benchcompare string) {
	t.Helper()
	zkraft, benchcompare = filepath.Join(dir, "zkraft"), filepath.Join(dir, "benchcompare")
	for _, b := range []struct{ out, pkg string }{{zkraft, "../../cmd/zkraft"}, {benchcompare, "."}} {
		// go test puts its own GOROOT/bin first on PATH.
		args := []string{"build", "-o", b.out}
		if b.out == zkraft {
			args = append(args, testenv.BuildFlags()...)
		}
		if out, err := exec.Command("go", append(args, b.pkg)...).CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", b.pkg, err, out)
		}
	}
	return zkraft, benchcompare
}

// runBenchcompare runs the benchcompare binary with its ensembles'
// directories in tmp and returns its output and exit error. (Not through
// TMPDIR: internal/testing/testport keeps its port claims there, shared by every
// test process, so a TMPDIR of its own let parallel runs pick one port.)
func runBenchcompare(t *testing.T, bin, tmp string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := testproc.CommandContext(ctx, bin, append([]string{"-dir", tmp}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// testJVMFlags start the tests' ZooKeeper members as the tests' other
// JVMs start (procs.JVMFlags: C1 only, SerialGC): the tests check what
// benchcompare does, not ZooKeeper's speed, and its JIT and collector
// cost seconds of CPU a member.
var testJVMFlags = strings.Join(procs.JVMFlags, " ")

// TestMakeBenchEndToEnd is `make bench` in small: both ensembles, one
// workload, the failover, memory and restart measurements, one setData
// row through go-zookeeper with the floor beside it, one through the Java
// client, the Markdown table with a ratio on every row, and the latency
// plots beside it, linked.
func TestMakeBenchEndToEnd(t *testing.T) {
	needZooKeeper(t)
	t.Parallel()
	dir := t.TempDir()
	zkraft, bc := buildBoth(t, dir)
	tmp, table := t.TempDir(), filepath.Join(dir, "table.md")
	out, err := runBenchcompare(t, bc, tmp, "-zkraft", zkraft, "-workloads", "write", "-duration", "1s", "-reps", "1",
		"-settle", "0s", "-jit-warmup", "1s", "-nodes", "1000", "-load-settle", "1s", "-out", table,
		"-lowconc", "1x1", "-java", "write", "-extra-duration", "1s", "-extra-reps", "1",
		"-zk-jvm-flags", testJVMFlags)
	if err != nil {
		t.Fatalf("benchcompare: %v\n%s", err, out)
	}
	b, err := os.ReadFile(table)
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	for _, row := range []string{"| write (setData) throughput |", "| write (setData) p99 |", "| write (setData) server CPU/op |",
		"| leader kill -9 → next acknowledged write |", "| resident memory, 1000 znodes of 100 B (largest member) |",
		"| of which anonymous", "| restart to serving with that tree |",
		"| setData, 1 in flight (1 connection) |", "| write (setData), Java client |", "= **", "fsync of a 256-byte append",
		"[write (setData)](bench/write.svg)", "(bench/lowconc-1-in-flight.svg)", "(bench/java-write.svg)"} {
		if !strings.Contains(md, row) {
			t.Errorf("the table has no row %q:\n%s", row, md)
		}
	}
	ratio := regexp.MustCompile(`\*\*([0-9.]+)x\*\*`)
	// 7 in the table, 3 for each of the two rows beside it; one less when
	// ZooKeeper wrote nothing within the minute after its leader's kill
	// (its slow election is reported, not a failed run).
	want := 13
	if strings.Contains(md, "| leader kill -9 → next acknowledged write | never") {
		t.Logf("ZooKeeper acknowledged no write within a minute of its leader's kill:\n%s", out)
		want--
	}
	if n := len(ratio.FindAllString(md, -1)); n != want {
		t.Errorf("%d finite ratios in the table, want %d:\n%s", n, want, md)
	}
	for _, svg := range []string{"write.svg", "lowconc-1-in-flight.svg", "java-write.svg"} {
		if _, err := os.Stat(filepath.Join(dir, "bench", svg)); err != nil {
			t.Errorf("plot: %v", err)
		}
	}
	assertNothingLeft(t, tmp)
}

// TestFailedRunStopsItsEnsembles: a run that fails after both ensembles
// started (here every `zkraft bench` fails) stops all six members and
// removes their directories before it exits.
func TestFailedRunStopsItsEnsembles(t *testing.T) {
	needZooKeeper(t)
	t.Parallel()
	dir := t.TempDir()
	zkraft, bc := buildBoth(t, dir)
	wrapper := filepath.Join(dir, "zkraft-no-bench")
	script := "#!/bin/sh\nif [ \"$1\" = bench ]; then echo 'bench refused' >&2; exit 3; fi\nexec " + zkraft + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	out, err := runBenchcompare(t, bc, tmp, "-zkraft", wrapper, "-workloads", "write", "-duration", "1s", "-reps", "1",
		"-settle", "0s", "-jit-warmup", "1s", "-nodes", "0", "-failover=false", "-zk-jvm-flags", testJVMFlags)
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != 1 {
		t.Fatalf("benchcompare: %v, want exit status 1\n%s", err, out)
	}
	if !strings.Contains(out, "bench refused") {
		t.Errorf("the output does not say why the run failed:\n%s", out)
	}
	assertNothingLeft(t, tmp)
}

// assertNothingLeft checks that no process runs from under tmp (every
// member's command line names its zoo.cfg there) and that benchcompare's
// directory in tmp is gone.
func assertNothingLeft(t *testing.T, tmp string) {
	t.Helper()
	var left map[int]string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		left = benchcluster.ProcessesUnder(tmp)
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	for pid, cmd := range left {
		t.Errorf("still running after benchcompare exited: %s", cmd)
		_ = syscall.Kill(pid, syscall.SIGKILL) // not left to the next test
	}
	if left, err := filepath.Glob(filepath.Join(tmp, "benchcompare*")); err != nil || len(left) > 0 {
		t.Errorf("left in the temporary directory: %v %v", left, err)
	}
}

// TestInterruptedRunStopsItsEnsembles: SIGTERM once both ensembles serve
// (benchcompare then starts warming ZooKeeper's JIT) stops all six members
// and removes their directories, as Ctrl-C in `make bench` does.
func TestInterruptedRunStopsItsEnsembles(t *testing.T) {
	needZooKeeper(t)
	t.Parallel()
	zkraft, bc := buildBoth(t, t.TempDir())
	tmp := t.TempDir()
	cmd := exec.Command(bc, "-dir", tmp, "-zkraft", zkraft, "-workloads", "write", "-duration", "1s", "-reps", "1",
		"-jit-warmup", "1m", "-nodes", "0", "-failover=false", "-zk-jvm-flags", testJVMFlags)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := testproc.Start(t, cmd); err != nil {
		t.Fatal(err)
	}
	serving := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		ok := false
		for sc.Scan() {
			if !ok && strings.Contains(sc.Text(), "warming up ZooKeeper's JIT") {
				ok = true
				serving <- true
			}
		}
		if !ok {
			serving <- false
		}
	}()
	select {
	case ok := <-serving:
		if !ok {
			_ = cmd.Wait()
			t.Fatalf("benchcompare ended before the ensembles served: %s", stderr.String())
		}
	case <-time.After(3 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatal("the ensembles did not serve within 3 minutes")
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != 1 {
		t.Errorf("benchcompare after SIGTERM: %v, want exit status 1\n%s", err, stderr.String())
	}
	assertNothingLeft(t, tmp)
}
