package migration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/procs"
	"github.com/zkraft/zkraft/internal/testing/testenv"
	"github.com/zkraft/zkraft/internal/testing/testproc"
)

// docBlocks returns the ```sh blocks of docs/operations.md between the
// marker naming test and the end marker, in order.
func docBlocks(t *testing.T, test string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "<!-- test: "+test+" runs the sh blocks from here -->")
	if !ok {
		t.Fatalf("docs/operations.md has no marker for %s", test)
	}
	section, _, ok = strings.Cut(section, "<!-- end of "+test+" -->")
	if !ok {
		t.Fatalf("docs/operations.md: the %s section has no end marker", test)
	}
	var blocks []string
	for {
		_, after, ok := strings.Cut(section, "```sh\n")
		if !ok {
			break
		}
		block, rest, ok := strings.Cut(after, "```")
		if !ok {
			t.Fatalf("docs/operations.md: a %s block is not closed", test)
		}
		blocks = append(blocks, block)
		section = rest
	}
	if len(blocks) == 0 {
		t.Fatalf("docs/operations.md: no ```sh blocks for %s", test)
	}
	return blocks
}

// TestBackupWalkthrough runs the backup and restore walk-through of
// docs/operations.md as written, in one bash with `set -e`: three members
// started from zoo.cfg files, data written, a snapshot saved and
// inspected, restored into a single member and into a new three-member
// ensemble that serve the same data with the same Stat (the doc diffs
// them), the new ensemble with its own membership. Only the loopback
// prefix (NET) is the test's, so parallel runs do not meet.
func TestBackupWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("starts seven server processes")
	}
	net, out := runWalkthrough(t, "TestBackupWalkthrough", 3*time.Minute)
	for _, want := range []string{
		"saved           backup.snap", "LARGEST SUBTREES BY BYTES", "members         standalone",
		"members         3 (1, 2, 3), this member is 3",
		"server.1=" + net + ".21:2888:3888:participant;" + net + ".21:2181",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the walk-through's output lacks %q:\n%s", want, out)
		}
	}
}

// runWalkthrough runs the sh blocks docs/operations.md marks for test as
// one bash script with `set -e`, zkraft on its PATH and a loopback prefix
// (NET) of the test's own, so parallel runs do not meet. It returns the
// prefix and the script's output, failing t if the script fails.
func runWalkthrough(t *testing.T, test string, timeout time.Duration) (net, output string) {
	t.Helper()
	script := "set -e\n" + strings.Join(docBlocks(t, test), "")
	bin := procs.Binary(t)
	net = fmt.Sprintf("127.%d.%d", 100+rand.IntN(150), 1+rand.IntN(250))
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := testproc.CommandContext(ctx, "bash", "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"), "NET="+net, "TMPDIR="+t.TempDir())
	// A server the script left running holds its output open: once bash
	// is gone, Wait gives up on the output after WaitDelay.
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// Whatever the script left running (it stopped early) goes with its
	// process group (testproc), at the latest when the test ends.
	if err := testproc.Start(t, cmd); err != nil {
		t.Fatal(err)
	}
	defer testproc.Kill(cmd)
	if err := cmd.Wait(); err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		t.Fatalf("the walk-through failed: %v\n%s", err, out.String())
	}
	return net, out.String()
}

// TestMigrationWalkthrough runs the migration walk-through of
// docs/operations.md as written: a three-server Apache ZooKeeper 3.8
// ensemble (Debian's package) started from zoo.cfg files and written to,
// stopped, each server's data directory imported with import-zookeeper
// and zkraft started on the same zoo.cfg; every server then serves the
// same data with the same Stat (the doc diffs them), and a new sequential
// create goes on from ZooKeeper's counter.
func TestMigrationWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three ZooKeeper and three zkraft servers")
	}
	requireZooKeeper(t)
	_, out := runWalkthrough(t, "TestMigrationWalkthrough", 3*time.Minute)
	for _, want := range []string{"znodes ", "leader", "Created /app/jobs/job-0000000002"} {
		if !strings.Contains(out, want) {
			t.Errorf("the walk-through's output lacks %q:\n%s", want, out)
		}
	}
}

// TestLiveMigrationWalkthrough runs the live migration walk-through of
// docs/operations.md as written: a three-server Apache ZooKeeper 3.8
// ensemble (Debian's package) with three zkraft observers in its
// configuration; a dry run of migrate follow --check-digests; the three
// zkraft servers follow it, serve the same data and forward a write; the
// cutover makes them a zkraft ensemble; ZooKeeper is stopped; writes go
// on; a server restarted on its edited zoo.cfg serves the same data.
func TestLiveMigrationWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three ZooKeeper and three zkraft servers")
	}
	requireZooKeeper(t)
	_, out := runWalkthrough(t, "TestLiveMigrationWalkthrough", 4*time.Minute)
	for _, want := range []string{"observer", "writes were held for", "Created /app/jobs/job-0000000001",
		"Created /app/jobs/job-0000000002", "server.4="} {
		if !strings.Contains(out, want) {
			t.Errorf("the walk-through's output lacks %q:\n%s", want, out)
		}
	}
	t.Logf("the walk-through's output:\n%s", out)
}

// requireZooKeeper returns java, after checking that it and Debian's
// ZooKeeper server jar (with slf4j-nop) are installed: a test that runs
// ZooKeeper from the command line is skipped without them, and fails in
// CI (testenv.Require), where .ci/run installs them.
func requireZooKeeper(t *testing.T) (java string) {
	t.Helper()
	for _, f := range []string{"/usr/share/java/zookeeper.jar", "/usr/share/java/slf4j-nop.jar"} {
		if _, err := os.Stat(f); err != nil {
			testenv.Require(t, fmt.Errorf("Debian's zookeeper package is missing (.ci/run installs it): %w", err))
		}
	}
	java, err := exec.LookPath("java")
	if err != nil {
		testenv.Require(t, fmt.Errorf("java is missing (.ci/run installs it): %w", err))
	}
	return java
}
