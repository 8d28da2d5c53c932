package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/testenv"
)

// The compatibility tests run real ZooKeeper clients (the Java client and
// recipes, zkCli.sh's ZooKeeperMain, kazoo, the C shell cli_mt) against a
// dedicated zkraft server, and against a dedicated Apache ZooKeeper to
// validate each script or program itself. With ZKRAFT_E2E_TARGET=zookeeper
// only the ZooKeeper run happens. Their fixtures live in testdata/compat:
//
//	java/ZkCompat.java     compiled with javac at test time (TestCompatJava)
//	zkcli/*.txt            zkCli command scripts (TestCompatZkCli)
//	kazoo/recipes.py       run with /usr/bin/python3 (TestCompatKazoo)
//	climt/*.txt            cli_mt commands, one batch run each (TestCompatCClient)
//
// TestDifferentialSessions compares zkraft with ZooKeeper on seeded random
// multi-session workloads; see its doc for ZKRAFT_DIFF_SEEDS,
// ZKRAFT_DIFF_OPS and ZKRAFT_DIFF_TRACE. ZKRAFT_COMPAT_STRICT=1 stops
// tolerating the known zkraft departures listed in difftest_known_test.go.
// A missing client tool skips these tests locally and fails them on CI
// (CI=true).

// Client tools from the Debian packages.
const (
	kazooPython = "/usr/bin/python3"
	cliMt       = "/usr/lib/zookeeper/bin/cli_mt"
)

// javaClientJars is the class path of the Java client programs: the
// client jar (whose manifest pulls in netty, jute and slf4j-api), the
// recipes, and slf4j-nop to silence logging.
var javaClientJars = []string{
	zookeeperJar,
	"/usr/share/java/zookeeper-jute.jar",
	"/usr/share/java/zookeeper-recipes-lock.jar",
	"/usr/share/java/zookeeper-recipes-election.jar",
	"/usr/share/java/zookeeper-recipes-queue.jar",
	"/usr/share/java/slf4j-api.jar",
	slf4jNopJar,
}

// requireTool fails t on CI and skips it elsewhere when a client tool is
// missing: CI installs every tool, so a missing one there is a broken run.
func requireTool(t *testing.T, err error) {
	t.Helper()
	testenv.Require(t, err)
}

// skipShort skips t under -short (make test-short): the compatibility
// runs start JVMs and take seconds each. make test never sets -short.
func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: compatibility runs start a ZooKeeper JVM and real clients")
	}
}

// needFiles returns an error naming the first of paths that is missing.
func needFiles(paths ...string) error {
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("%s is missing: %w", p, err)
		}
	}
	return nil
}

var javaOnce sync.Once

// needJava makes sure java and the ZooKeeper jars are there and javaBin is
// set (the zkraft target does not set it in TestMain).
func needJava(t *testing.T) {
	t.Helper()
	var err error
	javaOnce.Do(func() {
		if javaBin == "" {
			javaBin, err = findZookeeper()
		}
	})
	if err == nil && javaBin == "" {
		err = errors.New("java or the ZooKeeper jars are missing")
	}
	requireTool(t, err)
	requireTool(t, needFiles(javaClientJars...))
}

// compatKinds returns the server kinds a compatibility client runs
// against: zkraft (under test) and zookeeper (validating the client
// script), or only zookeeper when that is the suite's target.
func compatKinds() []string {
	if target == targetZookeeper {
		return []string{targetZookeeper}
	}
	return []string{targetZkraft, targetZookeeper}
}

// compatServers starts one dedicated server of every compatKinds kind, in
// parallel, each stopped when t ends.
func compatServers(t *testing.T) map[string]*Server {
	t.Helper()
	needJava(t) // the ZooKeeper server is a JVM
	kinds := compatKinds()
	out := make(map[string]*Server, len(kinds))
	errs := make([]error, len(kinds))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, k := range kinds {
		s, err := newServer(t.TempDir(), ServerOptions{Kind: k})
		if err != nil {
			t.Fatalf("new %s server: %v", k, err)
		}
		t.Cleanup(func() {
			if err := s.Stop(); err != nil {
				t.Errorf("stop %s: %v", s.Kind, err)
			}
			if t.Failed() {
				t.Logf("%s server log %s, last lines:\n%s", s.Kind, s.LogPath(), s.LogTail(60))
			}
		})
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Start()
			mu.Lock()
			out[k] = s
			mu.Unlock()
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("start %s: %v", kinds[i], err)
		}
	}
	return out
}

// runTool runs cmd with stdin, killing its whole process group after
// timeout, and returns its combined output.
func runTool(t *testing.T, timeout time.Duration, stdin string, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if filepath.Base(name) == "java" {
		args = append([]string{noPerfData}, args...)
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	start := time.Now()
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("%s timed out after %v: %w", filepath.Base(name), timeout, ctx.Err())
	}
	t.Logf("%s %s: %v in %v", filepath.Base(name), strings.Join(args[max(0, len(args)-3):], " "), err, time.Since(start).Round(time.Millisecond))
	return buf.String(), err
}

// noPerfData keeps a test JVM out of /tmp/hsperfdata_<user>: when a file
// there was held by another process (a JVM of the same pid elsewhere), the
// JVM printed a warning into the output a test compares.
const noPerfData = "-XX:-UsePerfData"

// compatDir is the fixture directory of one client.
func compatDir(client string) string {
	return filepath.Join("testdata", "compat", client)
}

// checkLines matches the "PASS name detail" / "FAIL name detail" protocol
// of the compatibility programs.
var checkLine = regexp.MustCompile(`^(PASS|FAIL) (\S+)`)

// checkReport reads the check lines of one program run: it reports every
// FAIL, requires a clean exit and at least min checks, and returns the
// number of checks.
func checkReport(t *testing.T, kind, out string, runErr error, min int) int {
	t.Helper()
	n, failed := 0, 0
	for _, line := range strings.Split(out, "\n") {
		m := checkLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n++
		if m[1] == "FAIL" {
			failed++
			t.Errorf("%s: %s", kind, line)
		}
	}
	if runErr != nil || failed > 0 || n < min {
		t.Errorf("%s: exit %v, %d checks (want >= %d), %d failed; output:\n%s", kind, runErr, n, min, failed, out)
	} else {
		t.Logf("%s: %d checks passed", kind, n)
	}
	return n
}
