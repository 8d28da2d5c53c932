package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkraft/zkraft/internal/testing/testenv"
)

// Targets selectable with ZKRAFT_E2E_TARGET.
const (
	targetZkraft    = "zkraft"
	targetZookeeper = "zookeeper"
)

// Paths of the Debian ZooKeeper installation.
const (
	zookeeperJar = "/usr/share/java/zookeeper.jar"
	slf4jNopJar  = "/usr/share/java/slf4j-nop.jar"
	slf4jSimple  = "/usr/share/java/slf4j-simple.jar"
	// servletAPIJar lets ZooKeeper's Jetty AdminServer load (Debian's
	// zookeeper.jar manifest names Jetty but not the servlet API).
	servletAPIJar = "/usr/share/java/servlet-api.jar"
)

// Super user credentials configured on every server the suite starts.
const (
	superUser     = "super"
	superPassword = "superpw"
)

var (
	// target is the server implementation under test.
	target string
	// zkraftBin is the path of the zkraft binary built by TestMain (zkraft target only).
	zkraftBin string
	// javaBin is the java executable (zookeeper target only).
	javaBin string
	// shared is the server shared by the functional tests. Tests must not
	// stop, kill or restart it; each works under its own path (testRoot).
	shared *Server
)

// TestMain builds or finds the target, starts the shared server, runs the
// tests and stops the server.
func TestMain(m *testing.M) {
	// With ZKRAFT_RACE=1 (make test-race) the zkraft binary is built with
	// the race detector and any report its processes write fails the run.
	os.Exit(testenv.CollectingRaces(func() int { return run(m) }))
}

// run is TestMain returning its exit code, so deferred cleanup runs.
func run(m *testing.M) int {
	target = os.Getenv("ZKRAFT_E2E_TARGET")
	if target == "" {
		target = targetZkraft
	}
	tmp, err := os.MkdirTemp("", "zkraft-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	keep := false // a failed run keeps its binary and the shared server's files
	defer func() {
		if keep {
			fmt.Fprintf(os.Stderr, "e2e: kept %s for inspection\n", tmp)
			return
		}
		os.RemoveAll(tmp)
	}()

	switch target {
	case targetZkraft:
		if zkraftBin, err = buildZkraft(tmp); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: FAIL: cannot build the zkraft binary: %v\n", err)
			return 1
		}
	case targetZookeeper:
		if javaBin, err = findZookeeper(); err != nil {
			// An explicit request for the zookeeper target with no ZooKeeper
			// installed is an error, on CI or not: never skip silently.
			fmt.Fprintf(os.Stderr, "e2e: FAIL: ZKRAFT_E2E_TARGET=zookeeper but %v\n", err)
			return 1
		}
	default:
		fmt.Fprintf(os.Stderr, "e2e: FAIL: unknown ZKRAFT_E2E_TARGET %q (want %q or %q)\n",
			target, targetZkraft, targetZookeeper)
		return 1
	}
	fmt.Fprintf(os.Stderr, "e2e: target %s\n", target)

	shared, err = newServer(filepath.Join(tmp, "shared"), ServerOptions{})
	if err == nil {
		err = shared.Start()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: FAIL: cannot start the shared %s server: %v\n", target, err)
		if shared != nil {
			fmt.Fprint(os.Stderr, shared.LogTail(200))
		}
		return 1
	}
	code := m.Run()
	keep = code != 0
	if code != 0 {
		fmt.Fprintf(os.Stderr, "e2e: shared server log (%s), last lines:\n%s", shared.LogPath(), shared.LogTail(100))
	}
	if err := shared.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: FAIL: shared server did not stop cleanly: %v\n", err)
		keep = true
		if code == 0 {
			code = 1
		}
	}
	return code
}

// buildZkraft builds ./cmd/zkraft of the enclosing module into dir.
func buildZkraft(dir string) (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("not inside a Go module")
	}
	root := filepath.Dir(gomod)
	if _, err := os.Stat(filepath.Join(root, "cmd", "zkraft")); err != nil {
		return "", fmt.Errorf("%s/cmd/zkraft is missing: the server has not landed in this tree yet (%w)", root, err)
	}
	bin := filepath.Join(dir, "zkraft")
	args := append([]string{"build", "-o", bin}, testenv.BuildFlags()...)
	cmd := exec.Command("go", append(args, "./cmd/zkraft")...)
	cmd.Dir = root
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/zkraft: %w\n%s", err, buf.String())
	}
	return bin, nil
}

// findZookeeper locates java and the ZooKeeper jars.
func findZookeeper() (string, error) {
	java, err := exec.LookPath("java")
	if err != nil {
		return "", fmt.Errorf("java is not on PATH: %w", err)
	}
	for _, jar := range []string{zookeeperJar, slf4jNopJar} {
		if _, err := os.Stat(jar); err != nil {
			return "", fmt.Errorf("%s is missing (install the Debian zookeeper package): %w", jar, err)
		}
	}
	return java, nil
}

// requireTarget skips t unless the suite runs against want. This is a
// deliberate restriction of the test, never a missing dependency.
func requireTarget(t *testing.T, want, why string) {
	t.Helper()
	if target != want {
		t.Skipf("only meaningful against %s: %s", want, why)
	}
}
